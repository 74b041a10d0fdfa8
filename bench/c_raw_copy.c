/* The raw copy of reference-1's notes, the limit the declarative copy is measured against, in C
** so that callgrind counts it as it counts bench/c_migrate.c (bench/instructions.py): ATTACH the
** source and one INSERT … SELECT into a copy of the empty destination, journal and sync off (as
** cdmigrate writes its private destination; bench/run.py's raw-copy path does the same in Python).
**   c_raw_copy SOURCE DESTINATION     (DESTINATION: a copy of the empty destination store)
** Prints the seconds raw_copy() took, wall-clock then CPU, as c_migrate does. */
#include <sqlite3.h>
#include <stdio.h>
#include <time.h>

static int exec(sqlite3 *db, const char *sql) {
    char *error = NULL;
    int rc = sqlite3_exec(db, sql, NULL, NULL, &error);
    if (rc != SQLITE_OK) fprintf(stderr, "c_raw_copy: %s: %s\n", sql, error ? error : sqlite3_errstr(rc));
    sqlite3_free(error);
    return rc;
}

/* The copy itself (callgrind --toggle-collect=raw_copy counts this function alone). */
__attribute__((noinline)) int raw_copy(const char *source, const char *destination) {
    sqlite3 *db = NULL;
    int rc = sqlite3_open_v2(destination, &db, SQLITE_OPEN_READWRITE, NULL);
    sqlite3_stmt *statement = NULL;
    if (rc == SQLITE_OK) rc = exec(db, "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF");
    if (rc == SQLITE_OK) rc = sqlite3_prepare_v2(db, "ATTACH DATABASE ?1 AS s", -1, &statement, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_bind_text(statement, 1, source, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK) rc = sqlite3_step(statement) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
    sqlite3_finalize(statement);
    if (rc == SQLITE_OK) rc = exec(db, "BEGIN");
    if (rc == SQLITE_OK)
        rc = exec(db,
                  "INSERT INTO ZNOTA (Z_PK, Z_ENT, Z_OPT, ZCONTENIDO, ZFECHA, ZETIQUETAS) "
                  "SELECT Z_PK, (SELECT Z_ENT FROM main.Z_PRIMARYKEY WHERE Z_NAME = 'Nota'), 1, ZCONTENIDO, ZFECHA, "
                  "ZETIQUETAS FROM s.ZNOTA");
    if (rc == SQLITE_OK)
        rc = exec(db,
                  "UPDATE Z_PRIMARYKEY SET Z_MAX = (SELECT COALESCE(MAX(Z_PK), 0) FROM ZNOTA) WHERE Z_NAME = 'Nota'");
    if (rc == SQLITE_OK) rc = exec(db, "COMMIT");
    if (rc == SQLITE_OK) rc = exec(db, "DETACH DATABASE s");
    if (rc != SQLITE_OK && db) fprintf(stderr, "c_raw_copy: %s\n", sqlite3_errmsg(db));
    sqlite3_close(db);
    return rc;
}

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: c_raw_copy SOURCE DESTINATION\n"); return 2; }
    struct timespec t0, t1, c0, c1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
    int rc = raw_copy(argv[1], argv[2]);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (rc != SQLITE_OK) return 1;
    printf("%.6f %.6f\n", (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
           (double)(c1.tv_sec - c0.tv_sec) + (double)(c1.tv_nsec - c0.tv_nsec) / 1e9);
    return 0;
}
