/* A migration through the C API with no policy: the declarative path, for the benchmark and for
** instruction counts (valgrind --tool=callgrind).
**   c_migrate SOURCE_MODEL DESTINATION_MODEL MAPPING SOURCE DESTINATION
** Prints the seconds the migration took (cdm_migration_run alone) on standard output: wall-clock,
** then the process's CPU time (user and system). */
#include <cdmigrate.h>
#include <stdio.h>
#include <time.h>

int main(int argc, char **argv) {
    if (argc != 6) { fprintf(stderr, "usage: c_migrate SOURCE_MODEL DESTINATION_MODEL MAPPING SOURCE DESTINATION\n"); return 2; }
    cdm_model *from = NULL, *to = NULL;
    cdm_mapping *mapping = NULL;
    cdm_migration *migration = NULL;
    int rc = cdm_model_from_file(argv[1], &from);
    if (rc == CDM_OK) rc = cdm_model_from_file(argv[2], &to);
    if (rc == CDM_OK) rc = cdm_mapping_from_file(argv[3], &mapping);
    if (rc == CDM_OK) rc = cdm_migration_new(from, to, &mapping, 1, &migration);
    struct timespec t0, t1, c0, c1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
    if (rc == CDM_OK) rc = cdm_migration_run(migration, argv[4], argv[5]);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (rc != CDM_OK) fprintf(stderr, "c_migrate: error %d: %s\n", rc, migration ? cdm_migration_errmsg(migration) : "cannot load the models");
    else printf("%.6f %.6f\n", (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
                (double)(c1.tv_sec - c0.tv_sec) + (double)(c1.tv_nsec - c0.tv_nsec) / 1e9);
    cdm_migration_free(migration);
    cdm_mapping_free(mapping);
    cdm_model_free(to);
    cdm_model_free(from);
    return rc == CDM_OK ? 0 : 1;
}
