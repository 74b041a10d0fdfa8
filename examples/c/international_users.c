/* Scenario 5 in C: InternationalUser splits into SwedenUser and FinlandUser; other countries are
** not migrated. Twice: with the blog's custom policies SwedenUserMapping / FinlandUserMapping
** (each makes its entity only for its country and replaces one city: Trosa → Nora, Turku → Åbo),
** and with no code at all (a source predicate and a value expression per entity mapping). Both
** must give the same rows, and the report must say how many users no mapping took.
** The source model is built here with jansson's json_pack — and must match UsersV1.model.json
** (the migration, made from the file, checks the store's version hashes). */
#include "example.h"
#include <jansson.h>
#include "unicode_text.h"

#define USERS 2000
static const char *COUNTRIES[] = {"Sweden", "Finland", "Norway", "Denmark", "Estonia"};
static const char *CITIES[5][5] = {
    {"Stockholm", "Göteborg", "Trosa", "Uppsala", "Malmö"},
    {"Helsinki", "Turku", "Tampere", "Trosa", "Oulu"},
    {"Oslo", "Bergen", "Trosa", "Tromsø", "Stavanger"},
    {"København", "Aarhus", "Odense", "Aalborg", "Esbjerg"},
    {"Tallinn", "Tartu", "Turku", "Pärnu", "Narva"}};
static const char *FIRST[] = {"Astrid", "Lars", "Aino", "Mikko", "Ingrid", "Ole", "Freja", "Mads", "Kadri", "Jaan", "Elsa", "Juhani"};
static struct { int country; const char *city; char name[48]; } user[USERS];

static cdm_model *model_with_json_pack(void) {
    json_t *root = json_pack("{s:s, s:s, s:[{s:s, s:[{s:s, s:s, s:b}, {s:s, s:s, s:b}, {s:s, s:s, s:b}]}]}",
        "name", "Users", "versionIdentifier", "v1", "entities",
        "name", "InternationalUser", "attributes",
        "name", "name", "type", "string", "optional", 0,
        "name", "city", "type", "string", "optional", 0,
        "name", "country", "type", "string", "optional", 0);
    CHECK(root != NULL);
    char *text = root ? json_dumps(root, JSON_COMPACT) : NULL;
    cdm_model *model = NULL;
    MUST(cdm_model_from_json(text ? text : "", &model));
    free(text);
    json_decref(root);
    return model;
}

static void generate(const char *path) {
    cdm_model *model = model_with_json_pack();
    cdm_store *store = NULL;
    MUST(cdm_store_create(model, path, &store));
    rng r = {46};
    for (int i = 0; i < USERS; i++) {
        int roll = rng_below(&r, 100);
        int country = roll < 35 ? 0 : roll < 65 ? 1 : 2 + rng_below(&r, 3);
        user[i].country = country;
        user[i].city = CITIES[country][rng_below(&r, 5)];
        snprintf(user[i].name, sizeof user[i].name, "%s %d", FIRST[rng_below(&r, 12)], i);
        cdm_object *o = NULL;
        MUST(cdm_store_insert(store, "InternationalUser", &o));
        cdm_field fields[3] = {cdm_field_text("name", user[i].name), cdm_field_text("city", user[i].city),
                               cdm_field_text("country", COUNTRIES[country])};
        MUST(cdm_object_set_fields(o, fields, 3, 0));
        cdm_object_release(o);
    }
    MUST(cdm_store_save(store));
    cdm_store_close(store);
    cdm_model_free(model);
}

/* SwedenUserMapping / FinlandUserMapping: `user` is the policy's country and city replacement. */
typedef struct { const char *country, *city, *replacement; int index_country, index_city; } country_policy;

static int country_begin(cdm_context *ctx, void *user) {
    country_policy *p = user;
    const cdm_model *source = NULL;
    cdm_attribute_info info;
    TRY(cdm_context_model(ctx, CDM_STORE_SOURCE, &source));
    TRY(cdm_model_attribute_info(source, "InternationalUser", "country", &info));
    p->index_country = info.index;
    TRY(cdm_model_attribute_info(source, "InternationalUser", "city", &info));
    p->index_city = info.index;
    return CDM_OK;
}

/* Every occurrence of `target` in text replaced by `replacement`, left to right, where an
** occurrence starts and ends on grapheme cluster boundaries (as Swift's String and the engine's
** stringByReplacingOccurrencesOfString:withString: compare whole characters: "Trosa" is replaced
** in "Östra Trosa", not in "Trosa\u0301"). A new string to free; NULL when out of memory. */
static char *replace_all(const char *text, size_t length, const char *target, const char *replacement) {
    size_t t = strlen(target), r = strlen(replacement);
    char *boundary = calloc(length + 1, 1);
    char *out = malloc(length * (r > t ? r : 1) + 1), *o = out;
    if (!boundary || !out) { free(boundary); free(out); return NULL; }
    for (size_t i = 0; i < length; i += text_prefix_graphemes(text + i, length - i, 1)) boundary[i] = 1;
    boundary[length] = 1;
    for (size_t i = 0; i < length; ) {
        if (t && i + t <= length && boundary[i + t] && !memcmp(text + i, target, t)) { memcpy(o, replacement, r); o += r; i += t; }
        else { size_t n = text_prefix_graphemes(text + i, length - i, 1); memcpy(o, text + i, n); o += n; i += n; }
    }
    *o = 0;
    free(boundary);
    return out;
}

static int country_create(cdm_context *ctx, cdm_object *source, void *user) {
    country_policy *p = user;
    cdm_field fields[3];
    size_t n = 0;
    TRY(cdm_object_get_fields(source, fields, 3, &n));           /* the whole row in one call */
    const cdm_field *country = &fields[p->index_country], *city = &fields[p->index_city];
    if (country->type != CDM_VALUE_STRING || strcmp(country->data, p->country) != 0) return CDM_OK;
    /* A nil city stays nil (v2's city is not optional: validation then fails with 1570, as the
    ** no-code mapping does); a city has every occurrence of the name replaced. */
    char *replaced = NULL;
    if (city->type == CDM_VALUE_STRING) {
        replaced = replace_all(city->data, (size_t)city->length, p->city, p->replacement);
        if (!replaced) return cdm_context_fail(ctx, CDM_ENTITY_MIGRATION_POLICY, "out of memory");
        fields[p->index_city] = cdm_field_text("city", replaced);
    }
    /* Make the mapping's entity, fill it (country is not in v2: skipped), associate — one call. */
    int rc = cdm_context_create_instance_with_fields(ctx, NULL, fields, n, CDM_FIELDS_SKIP_UNKNOWN, source, NULL);
    free(replaced);
    return rc;
}

static void check(cdm_migration *migration, const char *path) {
    int counts[5] = {0};
    for (int i = 0; i < USERS; i++) counts[user[i].country]++;
    sqlite3 *db = open_result(path);
    CHECK(scalar(db, "SELECT COUNT(*) FROM ZSWEDENUSER") == counts[0]);
    CHECK(scalar(db, "SELECT COUNT(*) FROM ZFINLANDUSER") == counts[1]);
    CHECK(scalar(db, "SELECT COUNT(*) FROM ZSWEDENUSER WHERE ZCITY = 'Trosa'") == 0);
    CHECK(scalar(db, "SELECT COUNT(*) FROM ZFINLANDUSER WHERE ZCITY = 'Turku'") == 0);
    for (int country = 0; country < 2; country++) {
        sqlite3_stmt *st = query(db, country ? "SELECT ZNAME, ZCITY FROM ZFINLANDUSER ORDER BY Z_PK" : "SELECT ZNAME, ZCITY FROM ZSWEDENUSER ORDER BY Z_PK");
        int i = 0;
        while (st && sqlite3_step(st) == SQLITE_ROW) {
            while (i < USERS && user[i].country != country) i++;
            if (i == USERS) { CHECK(!"more rows than users of the country"); break; }
            const char *city = user[i].city;
            if (country == 0 && !strcmp(city, "Trosa")) city = "Nora";
            if (country == 1 && !strcmp(city, "Turku")) city = "Åbo";
            CHECK_STR(column_text(st, 0), user[i].name);
            CHECK_STR(column_text(st, 1), city);
            i++;
        }
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
    /* The report says how many users no mapping took: every Norwegian, Dane and Estonian. */
    char *report = NULL;
    MUST(cdm_migration_report_json(migration, &report));
    json_error_t error;
    json_t *root = report ? json_loads(report, 0, &error) : NULL;
    json_int_t untaken = json_integer_value(json_object_get(json_object_get(root, "untakenSourceInstances"), "InternationalUser"));
    CHECK(untaken == counts[2] + counts[3] + counts[4]);
    json_decref(root);
    cdm_free(report);
}

int main(int argc, char **argv) {
    const char *source, *destination;
    int given = source_mode(argc, argv, &source, &destination);
    static country_policy sweden = {"Sweden", "Trosa", "Nora", 0, 0}, finland = {"Finland", "Turku", "Åbo", 0, 0};
    /* With the policies. */
    const char *with_code[] = {"5-international-users/UsersV1ToV2.mapping.json"};
    cdm_migration *migration = load_migration("5-international-users/UsersV1.model.json", "5-international-users/UsersV2.model.json", with_code, 1);
    cdm_policy hooks = {0};
    hooks.begin = country_begin;
    hooks.create_destination_instances = country_create;
    MUST(cdm_migration_register_policy(migration, "SwedenUserMapping", &hooks, sizeof hooks, &sweden, NULL));
    MUST(cdm_migration_register_policy(migration, "FinlandUserMapping", &hooks, sizeof hooks, &finland, NULL));
    if (given) {   /* with the policies into destination, with no code into destination.no-code */
        int status = source_mode_status(cdm_migration_run(migration, source, destination), migration);
        cdm_migration_free(migration);
        if (status) return status;
        const char *no_code[] = {"5-international-users/UsersV1ToV2NoCode.mapping.json"};
        migration = load_migration("5-international-users/UsersV1.model.json", "5-international-users/UsersV2.model.json", no_code, 1);
        char path[1024];
        snprintf(path, sizeof path, "%s.no-code", destination);
        status = source_mode_status(cdm_migration_run(migration, source, path), migration);
        cdm_migration_free(migration);
        return status;
    }
    example_begin();
    source = store_path("Users.sqlite");
    generate(source);
    if (run_migration(migration, source, store_path("Users-v2.sqlite")) == CDM_OK) check(migration, store_path("Users-v2.sqlite"));
    cdm_migration_free(migration);
    /* With no code: a source predicate and a value expression per entity mapping. */
    const char *no_code[] = {"5-international-users/UsersV1ToV2NoCode.mapping.json"};
    migration = load_migration("5-international-users/UsersV1.model.json", "5-international-users/UsersV2.model.json", no_code, 1);
    if (run_migration(migration, source, store_path("Users-v2-nocode.sqlite")) == CDM_OK) check(migration, store_path("Users-v2-nocode.sqlite"));
    cdm_migration_free(migration);
    return example_end("5 international-users");
}
