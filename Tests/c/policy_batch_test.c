/* C tests of a policy's batch hook (cdm_policy.create_destination_instances_batch) and the bulk
** calls (cdm_batch_*, cdm_batch_column_text's C arrays among them, cdm_context_create_instances_json, cdm_context_relate): a migration in
** batches across a batch boundary, checked in perform_custom_validation; misuse and bad names
** giving codes and messages; an older, smaller cdm_policy still registering; a failing batch
** hook stopping the run with its message. Prints "N passed, M failed" last. */
#include <cdmigrate.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

static char dir[256];

static const char *SOURCE_MODEL =
    "{\"name\": \"V1\", \"entities\": [{\"name\": \"Person\", \"attributes\": ["
    " {\"name\": \"name\", \"type\": \"string\"}, {\"name\": \"team\", \"type\": \"string\"},"
    " {\"name\": \"born\", \"type\": \"date\"}]}]}";
static const char *DESTINATION_MODEL =
    "{\"name\": \"V2\", \"entities\": ["
    " {\"name\": \"Member\", \"attributes\": [{\"name\": \"name\", \"type\": \"string\"}, {\"name\": \"born\", \"type\": \"date\"}],"
    "  \"relationships\": [{\"name\": \"team\", \"destination\": \"Team\", \"inverse\": \"members\"},"
    "                      {\"name\": \"tags\", \"destination\": \"Tag\", \"inverse\": \"members\", \"toMany\": true}]},"
    " {\"name\": \"Team\", \"attributes\": [{\"name\": \"label\", \"type\": \"string\"}],"
    "  \"relationships\": [{\"name\": \"members\", \"destination\": \"Member\", \"inverse\": \"team\", \"toMany\": true}]},"
    " {\"name\": \"Tag\", \"attributes\": [{\"name\": \"label\", \"type\": \"string\"}],"
    "  \"relationships\": [{\"name\": \"members\", \"destination\": \"Member\", \"inverse\": \"tags\", \"toMany\": true}]}]}";
static const char *MAPPING =
    "{\"entityMappings\": [{\"name\": \"PersonToMember\", \"sourceEntity\": \"Person\", \"destinationEntity\": \"Member\","
    " \"predicate\": \"TRUEPREDICATE\", \"policy\": \"Teams\", \"attributeMappings\": {\"name\": \"$source.name\", \"born\": \"$source.born\"}}]}";

/* Rows in Z_PK order: team "" and NULL mean none. */
static const char *NAMES[] = {"Ana", "Bo", "Cy", "Di", "Ed"};
static const char *TEAMS[] = {"red", "blue", NULL, "red", ""};

static char *path_in_dir(const char *name) {
    static char paths[8][512];
    static int next;
    char *p = paths[next++ % 8];
    snprintf(p, 512, "%s/%s", dir, name);
    return p;
}

static int make_source(cdm_model *model, const char *path) {
    cdm_store *store = NULL;
    CHECK_RC(cdm_store_create(model, path, &store), CDM_OK);
    for (int i = 0; i < 5; i++) {
        cdm_object *person = NULL;
        CHECK_RC(cdm_store_insert(store, "Person", &person), CDM_OK);
        CHECK_RC(cdm_object_set_text(person, "name", NAMES[i], CDM_NUL_TERMINATED), CDM_OK);
        if (TEAMS[i]) CHECK_RC(cdm_object_set_text(person, "team", TEAMS[i], CDM_NUL_TERMINATED), CDM_OK);
        CHECK_RC(cdm_object_set_date(person, "born", 1000.0 * i), CDM_OK);
    }
    int rc = cdm_store_save(store);
    cdm_store_close(store);
    return rc == CDM_OK;
}

typedef struct {
    int batches;
    size_t sizes[8];
    int64_t teams[2];   /* the keys of "red" and "blue", 0 until made */
    int64_t tag;        /* one Tag every member gets */
    int checked;
    int fail_with;      /* a batch hook that fails: the code it returns */
    int texts_seen;     /* rows whose cdm_batch_column_text was checked */
} teams_state;

static int teams_batch(cdm_context *ctx, cdm_batch *batch, void *user) {
    teams_state *s = user;
    size_t count = 0;
    CHECK_RC(cdm_batch_count(batch, &count), CDM_OK);
    if (s->batches < 8) s->sizes[s->batches] = count;
    s->batches++;
    if (s->fail_with) return cdm_context_fail(ctx, s->fail_with, "the batch hook refuses");
    const int64_t *source_keys = NULL;
    size_t key_count = 0;
    CHECK_RC(cdm_batch_source_keys(batch, &source_keys, &key_count), CDM_OK);
    CHECK(key_count == count);
    const int64_t *members = NULL;
    size_t made = 0;
    if (cdm_batch_apply_default(batch, &members, &made) != CDM_OK) return cdm_context_errcode(ctx);
    CHECK(made == count);
    const char *json = NULL;
    CHECK_RC(cdm_batch_column_json(batch, "team", &json), CDM_OK);
    if (!json) return CDM_MISUSE;
    /* The same column as C arrays: each row's text (NULL for a null) and its length. */
    const char *const *texts = NULL;
    const size_t *lengths = NULL;
    size_t text_count = 0;
    CHECK_RC(cdm_batch_column_text(batch, "team", &texts, &lengths, &text_count), CDM_OK);
    CHECK(text_count == count);
    for (size_t i = 0; texts && lengths && i < text_count && i < key_count; i++) {
        const char *expected = source_keys[i] >= 1 && source_keys[i] <= 5 ? TEAMS[source_keys[i] - 1] : "?";
        if (expected) CHECK_STR(texts[i], expected);
        else CHECK(texts[i] == NULL);
        CHECK(lengths[i] == (expected ? strlen(expected) : 0));
        s->texts_seen++;
    }
    CHECK_RC(cdm_batch_column_text(batch, "name", &texts, NULL, &text_count), CDM_OK);
    if (texts && text_count > 0 && source_keys[0] >= 1 && source_keys[0] <= 5) CHECK_STR(texts[0], NAMES[source_keys[0] - 1]);
    if (!s->tag) {
        const int64_t *keys = NULL;
        size_t n = 0;
        CHECK_RC(cdm_context_create_instances_json(ctx, "Tag", "[{\"label\": \"all\"}]", &keys, &n), CDM_OK);
        if (n == 1) s->tag = keys[0];
    }
    /* The column is small and its strings plain: find each row's team by its quoted name. */
    int64_t owners[8], targets[8], tagged[8];
    size_t pairs = 0;
    const char *cursor = json + 1;
    for (size_t i = 0; i < count && i < 8; i++) {
        int team = strncmp(cursor, "\"red\"", 5) == 0 ? 0 : strncmp(cursor, "\"blue\"", 6) == 0 ? 1 : -1;
        if (team >= 0) {
            if (!s->teams[team]) {
                const int64_t *keys = NULL;
                size_t n = 0;
                int rc = cdm_context_create_instances_json(ctx, "Team", team ? "[{\"label\": \"blue\"}]" : "[{\"label\": \"red\"}]", &keys, &n);
                if (rc != CDM_OK) return rc;
                s->teams[team] = keys[0];
            }
            owners[pairs] = members[i];
            targets[pairs++] = s->teams[team];
        }
        tagged[i] = s->tag;
        const char *comma = strchr(cursor, ',');
        cursor = comma ? comma + 1 : cursor + strlen(cursor);
    }
    if (cdm_context_relate(ctx, "Member", "team", owners, targets, pairs) != CDM_OK) return cdm_context_errcode(ctx);
    if (cdm_context_relate(ctx, "Member", "tags", members, tagged, count) != CDM_OK) return cdm_context_errcode(ctx);
    return CDM_OK;
}

/* Misuse and bad names, from inside a batch: codes and messages, never a trap. */
static int refusing_batch(cdm_context *ctx, cdm_batch *batch, void *user) {
    (void)user;
    const char *json = NULL;
    const int64_t *keys = NULL;
    size_t count = 0;
    int64_t one = 1, big = 999;
    CHECK_RC(cdm_batch_count(NULL, &count), CDM_MISUSE);
    CHECK_RC(cdm_batch_count(batch, NULL), CDM_MISUSE);
    CHECK_RC(cdm_batch_count((cdm_batch *)ctx, &count), CDM_MISUSE);
    CHECK_RC(cdm_batch_source_keys(batch, NULL, &count), CDM_MISUSE);
    CHECK_RC(cdm_batch_column_json(batch, "nothing", &json), CDM_NOTFOUND);
    CHECK_HAS(cdm_context_errmsg(ctx), "nothing");
    CHECK_RC(cdm_batch_column_json(batch, NULL, &json), CDM_MISUSE);
    const char *const *texts = NULL;
    const size_t *lengths = NULL;
    CHECK_RC(cdm_batch_column_text(batch, "nothing", &texts, &lengths, &count), CDM_NOTFOUND);
    CHECK_HAS(cdm_context_errmsg(ctx), "nothing");
    CHECK_RC(cdm_batch_column_text(batch, "born", &texts, &lengths, &count), CDM_MISMATCH);
    CHECK_HAS(cdm_context_errmsg(ctx), "born");
    CHECK_RC(cdm_batch_column_text(batch, "team", NULL, &lengths, &count), CDM_MISUSE);
    CHECK_RC(cdm_batch_column_text(batch, "team", &texts, &lengths, NULL), CDM_MISUSE);
    CHECK_RC(cdm_batch_column_text(batch, NULL, &texts, &lengths, &count), CDM_MISUSE);
    CHECK_RC(cdm_batch_column_text((cdm_batch *)ctx, "team", &texts, &lengths, &count), CDM_MISUSE);
    CHECK_RC(cdm_context_create_instances_json(ctx, "Nobody", "[]", &keys, &count), CDM_NOTFOUND);
    CHECK_HAS(cdm_context_errmsg(ctx), "Nobody");
    CHECK_RC(cdm_context_create_instances_json(ctx, "Team", "[{\"colour\": 1}]", &keys, &count), CDM_NOTFOUND);
    CHECK_HAS(cdm_context_errmsg(ctx), "colour");
    CHECK_RC(cdm_context_create_instances_json(ctx, "Team", "{\"label\": 1}", &keys, &count), CDM_INVALID_JSON);
    CHECK_RC(cdm_context_create_instances_json(ctx, "Team", "[{\"label\": ", &keys, &count), CDM_INVALID_JSON);
    CHECK_RC(cdm_context_create_instances_json(ctx, "Team", "[{\"label\": 12}]", &keys, &count), CDM_INVALID_ARGUMENT);
    CHECK_RC(cdm_context_relate(ctx, "Member", "friends", &one, &one, 1), CDM_NOTFOUND);
    CHECK_HAS(cdm_context_errmsg(ctx), "friends");
    CHECK_RC(cdm_context_relate(ctx, "Nobody", "team", &one, &one, 1), CDM_NOTFOUND);
    CHECK_RC(cdm_context_relate(ctx, "Member", "team", NULL, &one, 1), CDM_MISUSE);
    CHECK_RC(cdm_context_relate(ctx, "Member", "team", NULL, NULL, 0), CDM_OK);
    CHECK_RC(cdm_context_relate(ctx, "Member", "team", &big, &big, 1), CDM_INVALID_ARGUMENT);
    CHECK_HAS(cdm_context_errmsg(ctx), "999");
    CHECK_RC(cdm_batch_associate(batch, "Nobody", &one, &one, 1), CDM_NOTFOUND);
    const int64_t *made = NULL;
    size_t made_count = 0;
    CHECK_RC(cdm_batch_apply_default(batch, &made, &made_count), CDM_OK);
    CHECK_RC(cdm_batch_associate(batch, "Member", &big, made, 1), CDM_INVALID_ARGUMENT);
    CHECK_HAS(cdm_context_errmsg(ctx), "999");
    CHECK_RC(cdm_batch_associate(batch, "Member", NULL, NULL, 1), CDM_MISUSE);
    return CDM_OK;
}

static cdm_batch *kept_batch;
static int keeping_batch(cdm_context *ctx, cdm_batch *batch, void *user) {
    (void)ctx; (void)user;
    kept_batch = batch;
    return cdm_batch_apply_default(batch, NULL, NULL);
}

static int fetch_count(cdm_context *ctx, const char *entity, const char *predicate, const cdm_field *arguments, size_t argument_count) {
    size_t count = 0;
    if (cdm_context_count_destination(ctx, entity, predicate, arguments, argument_count, 0, &count) != CDM_OK) return -1;
    return (int)count;
}

static int check_destination(cdm_context *ctx, void *user) {
    teams_state *s = user;
    s->checked = 1;
    CHECK(fetch_count(ctx, "Member", NULL, NULL, 0) == 5);
    CHECK(fetch_count(ctx, "Team", NULL, NULL, 0) == 2);
    cdm_field red = cdm_field_text(NULL, "red");
    cdm_field blue = cdm_field_text(NULL, "blue");
    CHECK(fetch_count(ctx, "Member", "team.label == %@", &red, 1) == 2);
    CHECK(fetch_count(ctx, "Member", "team.label == %@", &blue, 1) == 1);
    CHECK(fetch_count(ctx, "Member", "team == nil", NULL, 0) == 2);
    CHECK(fetch_count(ctx, "Member", "ANY tags.label == 'all'", NULL, 0) == 5);
    cdm_list *list = NULL;
    CHECK_RC(cdm_context_fetch_destination(ctx, "Team", "label == 'red'", NULL, 0, 0, 1, &list), CDM_OK);
    cdm_object *team = NULL;
    if (list && cdm_list_object_at(list, 0, &team) == CDM_OK) {
        cdm_object *const *members = NULL;
        size_t count = 0;
        CHECK_RC(cdm_object_get_objects(team, "members", &members, &count), CDM_OK);
        CHECK(count == 2);
    }
    CHECK(fetch_count(ctx, "Member", "name == 'Di'", NULL, 0) == 1);
    return CDM_OK;
}

static cdm_migration *new_migration(cdm_model *src, cdm_model *dst) {
    cdm_mapping *mapping = NULL;
    CHECK_RC(cdm_mapping_from_json(MAPPING, &mapping), CDM_OK);
    cdm_migration *migration = NULL;
    CHECK_RC(cdm_migration_new(src, dst, &mapping, 1, &migration), CDM_OK);
    cdm_mapping_free(mapping);
    return migration;
}

static void test_batches(cdm_model *src, cdm_model *dst, const char *source) {
    cdm_migration *migration = new_migration(src, dst);
    teams_state s;
    memset(&s, 0, sizeof s);
    cdm_policy policy;
    memset(&policy, 0, sizeof policy);
    policy.create_destination_instances_batch = teams_batch;
    policy.perform_custom_validation = check_destination;
    CHECK_RC(cdm_migration_set_batch_size(migration, 0), CDM_INVALID_ARGUMENT);
    CHECK_RC(cdm_migration_set_batch_size(migration, 2), CDM_OK);
    CHECK_RC(cdm_migration_register_policy(migration, "Teams", &policy, sizeof policy, &s, NULL), CDM_OK);
    CHECK_RC(cdm_migration_run(migration, source, path_in_dir("batches.sqlite")), CDM_OK);
    CHECK(s.batches == 3);
    CHECK(s.sizes[0] == 2 && s.sizes[1] == 2 && s.sizes[2] == 1);
    CHECK(s.checked == 1);
    CHECK(s.texts_seen == 5);
    cdm_migration_free(migration);
}

static void test_refusals(cdm_model *src, cdm_model *dst, const char *source) {
    cdm_migration *migration = new_migration(src, dst);
    cdm_policy policy;
    memset(&policy, 0, sizeof policy);
    policy.create_destination_instances_batch = refusing_batch;
    CHECK_RC(cdm_migration_register_policy(migration, "Teams", &policy, sizeof policy, NULL, NULL), CDM_OK);
    CHECK_RC(cdm_migration_run(migration, source, path_in_dir("refusals.sqlite")), CDM_OK);
    cdm_migration_free(migration);

    /* A batch kept past its hook is a stale handle: misuse, not a crash. */
    migration = new_migration(src, dst);
    memset(&policy, 0, sizeof policy);
    policy.create_destination_instances_batch = keeping_batch;
    CHECK_RC(cdm_migration_register_policy(migration, "Teams", &policy, sizeof policy, NULL, NULL), CDM_OK);
    CHECK_RC(cdm_migration_run(migration, source, path_in_dir("kept.sqlite")), CDM_OK);
    size_t count = 0;
    CHECK_RC(cdm_batch_count(kept_batch, &count), CDM_MISUSE);
    cdm_migration_free(migration);
}

static void test_failing_batch(cdm_model *src, cdm_model *dst, const char *source) {
    cdm_migration *migration = new_migration(src, dst);
    teams_state s;
    memset(&s, 0, sizeof s);
    s.fail_with = CDM_ENTITY_MIGRATION_POLICY;
    cdm_policy policy;
    memset(&policy, 0, sizeof policy);
    policy.create_destination_instances_batch = teams_batch;
    CHECK_RC(cdm_migration_register_policy(migration, "Teams", &policy, sizeof policy, &s, NULL), CDM_OK);
    const char *destination = path_in_dir("failed.sqlite");
    CHECK_RC(cdm_migration_run(migration, source, destination), CDM_ENTITY_MIGRATION_POLICY);
    CHECK_HAS(cdm_migration_errmsg(migration), "the batch hook refuses");
    CHECK(access(destination, F_OK) != 0);
    cdm_migration_free(migration);
}

/* A host built against the header before the batch hook passes the smaller struct: its hooks
** still run, and nothing past them is read. */
typedef struct {
    int (*begin)(cdm_context *ctx, void *user);
    int (*create_destination_instances)(cdm_context *ctx, cdm_object *source, void *user);
    int (*end_instance_creation)(cdm_context *ctx, void *user);
    int (*create_relationships)(cdm_context *ctx, cdm_object *destination, void *user);
    int (*end_relationship_creation)(cdm_context *ctx, void *user);
    int (*perform_custom_validation)(cdm_context *ctx, void *user);
    int (*end)(cdm_context *ctx, void *user);
} older_policy;

static int older_calls;
static int older_create(cdm_context *ctx, cdm_object *source, void *user) {
    (void)user;
    older_calls++;
    cdm_object *made = NULL;
    return cdm_context_default_create_destination_instances(ctx, source, &made);
}

static void test_older_policy_struct(cdm_model *src, cdm_model *dst, const char *source) {
    CHECK(sizeof(older_policy) == offsetof(cdm_policy, create_destination_instances_batch));
    cdm_migration *migration = new_migration(src, dst);
    /* The older struct, followed by a pointer the library must not take for the batch hook. */
    struct { older_policy policy; void *after; } older;
    memset(&older, 0, sizeof older);
    older.policy.create_destination_instances = older_create;
    older.after = (void *)refusing_batch;
    CHECK_RC(cdm_migration_register_policy(migration, "Teams", (const cdm_policy *)&older.policy, sizeof older.policy, NULL, NULL), CDM_OK);
    CHECK_RC(cdm_migration_run(migration, source, path_in_dir("older.sqlite")), CDM_OK);
    CHECK(older_calls == 5);
    cdm_migration_free(migration);
}

/* cdm_batch_apply_default_numbered after an instance the hook made itself: the default's rows
** take the next keys (never the source keys); and cdm_object_release ends a fetch's list, its
** instances staying valid. */
typedef struct {
    int64_t keys[8];
    size_t count;
    int lists_released;
} numbered_state;

static int numbered_batch(cdm_context *ctx, cdm_batch *batch, void *user) {
    numbered_state *s = user;
    const int64_t *made = NULL;
    size_t n = 0;
    if (s->count == 0) {
        CHECK_RC(cdm_context_create_instances_json(ctx, "Member", "[{\"name\": \"own\", \"born\": 0}]", &made, &n), CDM_OK);
        if (n == 1) s->keys[s->count++] = made[0];
    }
    CHECK_RC(cdm_batch_apply_default_numbered(batch, &made, &n), CDM_OK);
    for (size_t i = 0; i < n && s->count < 8; i++) s->keys[s->count++] = made[i];
    cdm_list *list = NULL;
    CHECK_RC(cdm_context_fetch_destination(ctx, "Member", "name == 'own'", NULL, 0, 0, 0, &list), CDM_OK);
    cdm_object *own = NULL;
    CHECK_RC(cdm_list_object_at(list, 0, &own), CDM_OK);
    cdm_object_release((cdm_object *)list);
    size_t count = 0;
    CHECK_RC(cdm_list_count(list, &count), CDM_MISUSE);
    const char *entity = NULL;
    CHECK_RC(cdm_object_entity_name(own, &entity), CDM_OK);
    CHECK(entity && strcmp(entity, "Member") == 0);
    s->lists_released++;
    return CDM_OK;
}

static void test_numbered_default(cdm_model *src, cdm_model *dst, const char *source) {
    cdm_migration *migration = new_migration(src, dst);
    numbered_state s;
    memset(&s, 0, sizeof s);
    cdm_policy policy;
    memset(&policy, 0, sizeof policy);
    policy.create_destination_instances_batch = numbered_batch;
    CHECK_RC(cdm_migration_set_batch_size(migration, 2), CDM_OK);
    CHECK_RC(cdm_migration_register_policy(migration, "Teams", &policy, sizeof policy, &s, NULL), CDM_OK);
    CHECK_RC(cdm_migration_run(migration, source, path_in_dir("numbered.sqlite")), CDM_OK);
    CHECK(s.count == 6);
    for (size_t i = 0; i < s.count; i++) CHECK(s.keys[i] == (int64_t)i + 1);
    CHECK(s.lists_released == 3);
    cdm_migration_free(migration);
}

int main(void) {
    snprintf(dir, sizeof dir, "/tmp/cdm-policy-batch-XXXXXX");
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 2; }
    cdm_model *src = NULL, *dst = NULL;
    CHECK_RC(cdm_model_from_json(SOURCE_MODEL, &src), CDM_OK);
    CHECK_RC(cdm_model_from_json(DESTINATION_MODEL, &dst), CDM_OK);
    static char source[512];
    snprintf(source, sizeof source, "%s", path_in_dir("v1.sqlite"));
    if (make_source(src, source)) {
        test_batches(src, dst, source);
        test_refusals(src, dst, source);
        test_failing_batch(src, dst, source);
        test_older_policy_struct(src, dst, source);
        test_numbered_default(src, dst, source);
    } else {
        failed++;
        fprintf(stderr, "FAIL: could not make the source store\n");
    }
    cdm_model_free(src);
    cdm_model_free(dst);
    char command[600];
    snprintf(command, sizeof command, "rm -rf '%s'", dir);
    if (system(command) != 0) fprintf(stderr, "warning: could not remove %s\n", dir);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
