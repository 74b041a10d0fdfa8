import CDMigrate
import ReferenceMigrations

print("cdmigrate examples")
