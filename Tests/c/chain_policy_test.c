/* A chain handle (cdm_migration_new_chain) with host policies: UnCloudNotes stores at v1, v2 and
** v3 reach v4 in one cdm_migration_run each, with the policy AttachmentToImageAttachment written
** in C by examples/c/uncloudnotes.c (its source is reused here: its generator, policy and checks).
** The rows equal those of the example's step-by-step migration and, when the Swift runner
** (cdmigrate-examples, built by swift build) is found, those of the Swift policy. Then misuse:
** NULL arguments, a handle of another kind, a chain whose policy is not registered. Run from
** Tests/c. */
#define EXAMPLES_DIR "../../examples"
#define main uncloudnotes_example_main
#include "../../examples/c/uncloudnotes.c"
#undef main

static const char *MODELS = EXAMPLES_DIR "/4-uncloudnotes";
static const char *POLICY = "AttachmentToImageAttachmentMigrationPolicyV3toV4";

/* Every table of the two stores holds the same rows (all columns but Z_OPT; Z_METADATA without
** its UUID and plist). Returns the number of tables compared, or -1 on a difference. */
static int same_rows(const char *a, const char *b) {
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(a, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) { sqlite3_close(db); return -1; }
    char sql[4096];
    snprintf(sql, sizeof sql, "ATTACH '%s' AS other", b);
    if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK) { sqlite3_close(db); return -1; }
    sqlite3_stmt *tables = NULL;
    sqlite3_prepare_v2(db, "SELECT name FROM main.sqlite_master WHERE type = 'table' ORDER BY name", -1, &tables, NULL);
    int compared = 0;
    while (sqlite3_step(tables) == SQLITE_ROW) {
        const char *table = (const char *)sqlite3_column_text(tables, 0);
        char columns[2048] = "";
        size_t n = 0;
        sqlite3_stmt *info = NULL;
        snprintf(sql, sizeof sql, "PRAGMA main.table_info(\"%s\")", table);
        sqlite3_prepare_v2(db, sql, -1, &info, NULL);
        while (sqlite3_step(info) == SQLITE_ROW) {
            const char *column = (const char *)sqlite3_column_text(info, 1);
            if (!strcmp(column, "Z_OPT") || (!strcmp(table, "Z_METADATA") && (!strcmp(column, "Z_UUID") || !strcmp(column, "Z_PLIST")))) continue;
            n += (size_t)snprintf(columns + n, sizeof columns - n, "%s\"%s\"", n ? ", " : "", column);
        }
        sqlite3_finalize(info);
        char *compare = sqlite3_mprintf(
            "SELECT (SELECT COUNT(*) FROM main.\"%w\") - (SELECT COUNT(*) FROM other.\"%w\"), "
            "(SELECT COUNT(*) FROM (SELECT %s FROM main.\"%w\" EXCEPT SELECT %s FROM other.\"%w\")), "
            "(SELECT COUNT(*) FROM (SELECT %s FROM other.\"%w\" EXCEPT SELECT %s FROM main.\"%w\"))",
            table, table, columns, table, columns, table, columns, table, columns, table);
        sqlite3_stmt *diff = NULL;
        int ok = compare && sqlite3_prepare_v2(db, compare, -1, &diff, NULL) == SQLITE_OK && sqlite3_step(diff) == SQLITE_ROW
                 && sqlite3_column_int(diff, 0) == 0 && sqlite3_column_int(diff, 1) == 0 && sqlite3_column_int(diff, 2) == 0;
        if (!ok) fprintf(stderr, "table %s differs between %s and %s\n", table, a, b);
        sqlite3_finalize(diff);
        sqlite3_free(compare);
        if (!ok) { compared = -1; break; }
        compared++;
    }
    sqlite3_finalize(tables);
    sqlite3_close(db);
    return compared;
}

/* The Swift runner, when built: $CDMIGRATE_EXAMPLES_RUNNER or ../../.build/debug/cdmigrate-examples. */
static const char *swift_runner(void) {
    const char *given = getenv("CDMIGRATE_EXAMPLES_RUNNER");
    const char *path = given && *given ? given : "../../.build/debug/cdmigrate-examples";
    return access(path, X_OK) == 0 ? path : NULL;
}

static int progress_calls;
static double last_fraction;
static int64_t last_run_processed;
static int last_step, last_step_count;
static int count_progress(const cdm_progress *progress, void *user) {
    (void)user;
    CHECK(progress->fraction >= last_fraction - 1e-9);
    /* The chain's rows and step: never going back; the step within the chain's steps. */
    CHECK(progress->run_processed >= last_run_processed && progress->run_processed <= progress->run_total);
    CHECK(progress->step >= last_step && progress->step < progress->step_count);
    last_fraction = progress->fraction;
    last_run_processed = progress->run_processed;
    last_step = progress->step;
    last_step_count = progress->step_count;
    progress_calls++;
    return 0;
}

/* A host function registered on the chain handle: counts the policy's steps through user info. */
static int steps_with_policy;
static int note_policy_step(cdm_context *ctx, void *user) {
    (void)user;
    void *flag = NULL;
    TRY(cdm_context_get_user_info(ctx, "run-flag", &flag));
    CHECK(flag != NULL && !strcmp((const char *)flag, "set before the run"));
    const cdm_model *model = NULL;
    TRY(cdm_context_model(ctx, CDM_STORE_DESTINATION, &model));
    size_t count = 0;
    TRY(cdm_model_entity_count(model, &count));
    CHECK(count == 3);   /* v4: Note, Attachment, ImageAttachment */
    steps_with_policy++;
    return CDM_OK;
}

static void register_policy(cdm_migration *migration) {
    cdm_policy hooks = {0};
    hooks.create_destination_instances = image_attachment_create;
    hooks.begin = note_policy_step;
    MUST(cdm_migration_register_policy(migration, POLICY, &hooks, sizeof hooks, NULL, NULL));
}

static void misuse(void) {
    cdm_migration *chain = NULL;
    CHECK(cdm_migration_new_chain(MODELS, NULL, NULL) == CDM_MISUSE);
    CHECK(cdm_migration_new_chain(NULL, NULL, &chain) == CDM_MISUSE);
    CHECK(chain != NULL);   /* a constructor: the failed handle can be asked and freed */
    CHECK(cdm_migration_errcode(chain) == CDM_MISUSE);
    CHECK(cdm_migration_run(chain, "x.sqlite", "y.sqlite") == CDM_MISUSE);
    cdm_migration_free(chain);
    chain = NULL;
    CHECK(cdm_migration_new_chain(MODELS, "UnCloudNotes_v9", &chain) == CDM_INVALID_ARGUMENT);
    CHECK(strstr(cdm_migration_errmsg(chain), "UnCloudNotes_v9") != NULL);
    cdm_migration_free(chain);

    /* A handle of another kind. */
    cdm_model *model = load_model(DIR_ "UnCloudNotes_v1.model.json");
    CHECK(cdm_migration_run((cdm_migration *)model, "x.sqlite", "y.sqlite") == CDM_MISUSE);
    CHECK(strstr(cdm_last_errmsg(), "cdm_model") != NULL);
    cdm_model_free(model);

    /* NULL paths, no report before a run, the policy not registered. */
    chain = NULL;
    MUST(cdm_migration_new_chain(MODELS, NULL, &chain));
    CHECK(cdm_migration_run(chain, NULL, "y.sqlite") == CDM_MISUSE);
    CHECK(cdm_migration_run(chain, store_path("UnCloudNotes-v3.sqlite"), NULL) == CDM_MISUSE);
    CHECK(cdm_migration_run_in_place(chain, NULL) == CDM_MISUSE);
    char *json = NULL;
    CHECK(cdm_migration_report_json(chain, &json) == CDM_MISUSE && json == NULL);
    CHECK(cdm_migration_report_json(chain, NULL) == CDM_MISUSE);
    CHECK(cdm_migration_get_user_info(chain, "k", NULL) == CDM_MISUSE);
    CHECK(cdm_migration_run(chain, store_path("UnCloudNotes-v1.sqlite"), store_path("unregistered.sqlite")) == CDM_ENTITY_MIGRATION_POLICY);
    CHECK(strstr(cdm_migration_errmsg(chain), POLICY) != NULL);
    CHECK(strstr(cdm_migration_errmsg(chain), "UnCloudNotes_v3 → UnCloudNotes_v4") != NULL);
    CHECK(access(store_path("unregistered.sqlite"), F_OK) != 0);
    cdm_migration_free(chain);
}

int main(void) {
    example_begin();
    const char *runner = swift_runner();
    if (!runner) fprintf(stderr, "note: no Swift runner (swift build): rows are compared with the C step-by-step result only\n");
    cdm_migration *chain = NULL;
    MUST(cdm_migration_new_chain(MODELS, NULL, &chain));
    register_policy(chain);
    MUST(cdm_migration_set_progress(chain, count_progress, NULL, NULL));
    MUST(cdm_migration_set_progress_interval(chain, 50));
    for (int version = 1; version <= 3; version++) {
        char name[64];
        snprintf(name, sizeof name, "UnCloudNotes-v%d.sqlite", version);
        char *source = strdup(store_path(name));
        snprintf(name, sizeof name, "chain-v%d.sqlite", version);
        char *destination = strdup(store_path(name));
        snprintf(name, sizeof name, "steps-v%d.sqlite", version);
        char *steps = strdup(store_path(name));
        generate(version, source);

        /* One call, with the user info every step starts with. */
        static char flag[] = "set before the run";
        MUST(cdm_migration_set_user_info(chain, "run-flag", flag, NULL));
        void *read_back = NULL;
        MUST(cdm_migration_get_user_info(chain, "run-flag", &read_back));
        CHECK(read_back == flag);
        steps_with_policy = progress_calls = 0;
        last_fraction = 0;
        last_run_processed = 0;
        last_step = 0;
        MUST(cdm_migration_run(chain, source, destination));
        CHECK(steps_with_policy == 1);
        CHECK(progress_calls > 0 && last_fraction > 0.99);
        CHECK(last_step_count == 4 - version && last_step == last_step_count - 1);   /* v<n> → v4 */
        check(destination);
        char *json = NULL;
        MUST(cdm_migration_report_json(chain, &json));
        char expected[128];
        snprintf(expected, sizeof expected, "\"storeVersion\":\"UnCloudNotes_v%d\"", version);
        CHECK(json && strstr(json, expected));
        CHECK(json && strstr(json, "\"targetVersion\":\"UnCloudNotes_v4\""));
        cdm_free(json);
        read_back = (void *)1;
        MUST(cdm_migration_get_user_info(chain, "run-flag", &read_back));
        CHECK(read_back == NULL);   /* released when the run ended */

        /* The same rows as the example's step-by-step migration, and as Swift's. */
        CHECK(migrate_to_v4(source, steps) == version);
        CHECK(same_rows(destination, steps) > 3);
        if (runner) {
            snprintf(name, sizeof name, "swift-v%d.sqlite", version);
            const char *swift = store_path(name);
            char command[2048];
            snprintf(command, sizeof command, "'%s' --scenario 4 --source '%s' --destination '%s'", runner, source, swift);
            CHECK(system(command) == 0);
            CHECK(same_rows(destination, swift) > 3);
        }

        /* In place, with the same handle: the store is at v4 afterwards. */
        if (version == 2) {
            MUST(cdm_migration_set_user_info(chain, "run-flag", flag, NULL));
            last_fraction = 0;
            last_run_processed = 0;
            last_step = 0;
            MUST(cdm_migration_run_in_place(chain, source));
            CHECK(same_rows(source, destination) > 3);
            MUST(cdm_migration_run_in_place(chain, source));   /* at the target: left as it is */
            json = NULL;
            MUST(cdm_migration_report_json(chain, &json));
            CHECK(json && strstr(json, "\"alreadyAtTarget\":true"));
            cdm_free(json);
        }
        free(source); free(destination); free(steps);
    }
    cdm_migration_free(chain);

    /* A chain to v3 does not need the policy. */
    chain = NULL;
    MUST(cdm_migration_new_chain(MODELS, "UnCloudNotes_v3", &chain));
    MUST(cdm_migration_run(chain, store_path("UnCloudNotes-v1.sqlite"), store_path("v1-to-v3.sqlite")));
    cdm_migration_free(chain);

    misuse();
    return example_end("chain_policy_test");
}
