/* Derived attributes through the C API: a store made with cdm_store_create at v1 is migrated to a
** v2 whose lists count their items, sum their prices, shout their names and stamp the time, and
** whose items copy their list's name. The migrated rows carry the derived values, the store has
** Core Data's Z_DA_ triggers and they keep the values right when the store is written afterwards
** (by a connection that registers Core Data's SQL functions, as Core Data's own do), and the store's
** model cache (cdm_model_from_store) reads back as v2 with v2's version hashes. */
#include "scratch.h"
#include <ctype.h>
#include <sqlite3.h>
#include <string.h>
#include <time.h>

#define V1 "{\"name\": \"Lists\", \"entities\": [" \
    "{\"name\": \"Item\", \"attributes\": [{\"name\": \"title\", \"type\": \"string\"}, {\"name\": \"price\", \"type\": \"double\"}]," \
    " \"relationships\": [{\"name\": \"list\", \"destination\": \"List\", \"inverse\": \"items\"}]}," \
    "{\"name\": \"List\", \"attributes\": [{\"name\": \"name\", \"type\": \"string\"}]," \
    " \"relationships\": [{\"name\": \"items\", \"destination\": \"Item\", \"inverse\": \"list\", \"toMany\": true}]}]}"
#define V2 "{\"name\": \"Lists\", \"entities\": [" \
    "{\"name\": \"Item\", \"attributes\": [{\"name\": \"title\", \"type\": \"string\"}, {\"name\": \"price\", \"type\": \"double\"}," \
    "  {\"name\": \"listName\", \"type\": \"string\", \"derivationExpression\": \"list.name\"}]," \
    " \"relationships\": [{\"name\": \"list\", \"destination\": \"List\", \"inverse\": \"items\"}]}," \
    "{\"name\": \"List\", \"attributes\": [{\"name\": \"name\", \"type\": \"string\"}," \
    "  {\"name\": \"itemCount\", \"type\": \"int64\", \"derivationExpression\": \"items.@count\"}," \
    "  {\"name\": \"total\", \"type\": \"double\", \"derivationExpression\": \"items.price.@sum\"}," \
    "  {\"name\": \"dearest\", \"type\": \"double\", \"derivationExpression\": \"items.price.@max\"}," \
    "  {\"name\": \"shout\", \"type\": \"string\", \"derivationExpression\": \"uppercase:(name)\"}," \
    "  {\"name\": \"touched\", \"type\": \"date\", \"derivationExpression\": \"now()\"}]," \
    " \"relationships\": [{\"name\": \"items\", \"destination\": \"Item\", \"inverse\": \"list\", \"toMany\": true}]}]}"

/* Seconds since 2001-01-01, as Core Data's dates. */
static double now_2001(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9 - 978307200.0;
}

/* The first column of the first row of `sql`, as text ("NULL" for null), in `out`. */
static const char *value(sqlite3 *db, const char *sql, char *out, size_t size) {
    sqlite3_stmt *statement = NULL;
    snprintf(out, size, "(error)");
    if (sqlite3_prepare_v2(db, sql, -1, &statement, NULL) != SQLITE_OK) {
        fprintf(stderr, "%s: %s\n", sql, sqlite3_errmsg(db));
        return out;
    }
    if (sqlite3_step(statement) == SQLITE_ROW) {
        const unsigned char *text = sqlite3_column_text(statement, 0);
        snprintf(out, size, "%s", text ? (const char *)text : "NULL");
    }
    sqlite3_finalize(statement);
    return out;
}

/* Core Data's SQL functions, as a host that writes such a store registers them. */
static void to_upper(sqlite3_context *context, int count, sqlite3_value **arguments) {
    (void)count;
    const unsigned char *text = sqlite3_value_text(arguments[0]);
    if (!text) { sqlite3_result_null(context); return; }
    char buffer[256];
    size_t i = 0;
    for (; text[i] && i + 1 < sizeof buffer; i++) buffer[i] = (char)toupper(text[i]);
    buffer[i] = 0;
    sqlite3_result_text(context, buffer, -1, SQLITE_TRANSIENT);
}
static void ignore(sqlite3_context *context, int count, sqlite3_value **arguments) {
    (void)count; (void)arguments;
    sqlite3_result_null(context);
}
static void now_function(sqlite3_context *context, int count, sqlite3_value **arguments) {
    (void)count; (void)arguments;
    sqlite3_result_double(context, now_2001());
}

/* The entities' version hashes of a model, in the model's order, joined (the models here declare
** their entities in name order, the order a cached model has them in). */
static void version_hashes(const cdm_model *model, char *out, size_t size) {
    char *json = NULL;
    out[0] = 0;
    if (cdm_model_json(model, &json) != CDM_OK || !json) { CHECK(0); return; }
    const char *at = json;
    while ((at = strstr(at, "\"versionHash\""))) {
        const char *open = strchr(at + 13, '"');
        const char *close = open ? strchr(open + 1, '"') : NULL;
        if (!close) break;
        strncat(out, open + 1, (size_t)(close - open - 1) < size - strlen(out) - 2 ? (size_t)(close - open - 1) : 0);
        strncat(out, " ", size - strlen(out) - 1);
        at = close;
    }
    cdm_free(json);
}

int main(void) {
    if (!scratch_begin("derived-attribute-test")) return 2;
    cdm_model *v1 = NULL, *v2 = NULL;
    CHECK_RC(cdm_model_from_json(V1, &v1), CDM_OK);
    CHECK_RC(cdm_model_from_json(V2, &v2), CDM_OK);

    /* The v1 store: groceries (milk 1.5, bread 2.25), an empty list, a stray item. */
    char *source = path_in_dir("lists.sqlite");
    cdm_store *store = NULL;
    CHECK_RC(cdm_store_create(v1, source, &store), CDM_OK);
    cdm_object *groceries = NULL, *empty = NULL, *item = NULL;
    CHECK_RC(cdm_store_insert(store, "List", &groceries), CDM_OK);
    CHECK_RC(cdm_object_set_text(groceries, "name", "groceries", CDM_NUL_TERMINATED), CDM_OK);
    CHECK_RC(cdm_store_insert(store, "List", &empty), CDM_OK);
    CHECK_RC(cdm_object_set_text(empty, "name", "empty", CDM_NUL_TERMINATED), CDM_OK);
    const char *titles[] = {"milk", "bread", "stray"};
    const double prices[] = {1.5, 2.25, 9};
    for (int i = 0; i < 3; i++) {
        CHECK_RC(cdm_store_insert(store, "Item", &item), CDM_OK);
        CHECK_RC(cdm_object_set_text(item, "title", titles[i], CDM_NUL_TERMINATED), CDM_OK);
        CHECK_RC(cdm_object_set_double(item, "price", prices[i]), CDM_OK);
        if (i < 2) CHECK_RC(cdm_object_set_object(item, "list", groceries), CDM_OK);
    }
    CHECK_RC(cdm_store_save(store), CDM_OK);
    cdm_store_close(store);

    /* The inferred migration to v2. */
    cdm_mapping *mapping = NULL;
    CHECK_RC(cdm_mapping_infer(v1, v2, &mapping), CDM_OK);
    cdm_migration *migration = NULL;
    CHECK_RC(cdm_migration_new(v1, v2, &mapping, 1, &migration), CDM_OK);
    char *destination = path_in_dir("out.sqlite");
    double before = now_2001();
    CHECK_RC(cdm_migration_run(migration, source, destination), CDM_OK);
    double after = now_2001();
    char *report = NULL;
    CHECK_RC(cdm_migration_report_json(migration, &report), CDM_OK);
    CHECK(report && !strstr(report, "derived attribute"));   /* no derivation left to its mapped value */
    cdm_free(report);
    cdm_migration_free(migration);
    cdm_mapping_free(mapping);

    /* The values, computed for the migrated rows. */
    sqlite3 *db = NULL;
    CHECK(sqlite3_open_v2(destination, &db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK);
    char buffer[256];
    CHECK_STR(value(db, "SELECT group_concat(ZNAME || ':' || ZITEMCOUNT || ':' || ZTOTAL || ':' || IFNULL(ZDEAREST, '-') || ':' || ZSHOUT, ' ')"
                        " FROM (SELECT * FROM ZLIST ORDER BY ZNAME)", buffer, sizeof buffer),
              "empty:0:0.0:-:EMPTY groceries:2:3.75:2.25:GROCERIES");
    CHECK_STR(value(db, "SELECT group_concat(ZTITLE || ':' || IFNULL(ZLISTNAME, '-'), ' ') FROM (SELECT * FROM ZITEM ORDER BY ZTITLE)",
                    buffer, sizeof buffer), "bread:groceries milk:groceries stray:-");
    /* now(): every migrated row carries the time of the migration. */
    CHECK_STR(value(db, "SELECT COUNT(*) FROM ZLIST WHERE ZTOUCHED IS NOT NULL", buffer, sizeof buffer), "2");
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM ZLIST WHERE ZTOUCHED >= %.3f AND ZTOUCHED <= %.3f", before - 1, after + 1);
    CHECK_STR(value(db, sql, buffer, sizeof buffer), "2");

    /* Core Data's triggers, by name. */
    CHECK_STR(value(db, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'Z\\_DA\\_%' ESCAPE '\\'", buffer, sizeof buffer), "23");
    CHECK_STR(value(db, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'trigger' AND name IN ("
                        "'Z_DA_ZITEM_List_itemCount_PARAMETER_INSERT', 'Z_DA_ZLIST_List_itemCount_SOURCE_INSERT',"
                        "'Z_DA_ZLIST_List_shout_UPDATE', 'Z_DA_ZLIST_List_touched_UPDATE', 'Z_DA_ZITEM_List_dearest_DELETE',"
                        "'Z_DA_ZLIST_Item_listName_PARAMETER_UPDATE', 'Z_DA_ZITEM_Item_listName_SOURCE_INSERT')", buffer, sizeof buffer), "7");

    /* Written afterwards, the triggers keep the values: the stray item joins the empty list, milk
    ** goes, the empty list is renamed. */
    CHECK(sqlite3_create_function(db, "NSCoreDataToUpper", 1, SQLITE_UTF8, NULL, to_upper, NULL, NULL) == SQLITE_OK);
    CHECK(sqlite3_create_function(db, "NSCoreDataNow", 0, SQLITE_UTF8, NULL, now_function, NULL, NULL) == SQLITE_OK);
    CHECK(sqlite3_create_function(db, "NSCoreDataDATriggerUpdatedAffectedObjectValue", 5, SQLITE_UTF8, NULL, ignore, NULL, NULL) == SQLITE_OK);
    CHECK(sqlite3_create_function(db, "NSCoreDataDATriggerInsertUpdatedAffectedObjectValue", 5, SQLITE_UTF8, NULL, ignore, NULL, NULL) == SQLITE_OK);
    char *error = NULL;
    int rc = sqlite3_exec(db,
        "UPDATE ZITEM SET ZLIST = (SELECT Z_PK FROM ZLIST WHERE ZNAME = 'empty') WHERE ZTITLE = 'stray';"
        "DELETE FROM ZITEM WHERE ZTITLE = 'milk';"
        "UPDATE ZLIST SET ZNAME = 'home' WHERE ZNAME = 'empty';", NULL, NULL, &error);
    CHECK(rc == SQLITE_OK);
    if (error) { fprintf(stderr, "%s\n", error); sqlite3_free(error); }
    CHECK_STR(value(db, "SELECT group_concat(ZNAME || ':' || ZITEMCOUNT || ':' || ZTOTAL || ':' || IFNULL(ZDEAREST, '-') || ':' || ZSHOUT, ' ')"
                        " FROM (SELECT * FROM ZLIST ORDER BY ZNAME)", buffer, sizeof buffer),
              "groceries:1:2.25:2.25:GROCERIES home:1:9.0:9.0:HOME");
    CHECK_STR(value(db, "SELECT group_concat(ZTITLE || ':' || IFNULL(ZLISTNAME, '-'), ' ') FROM (SELECT * FROM ZITEM ORDER BY ZTITLE)",
                    buffer, sizeof buffer), "bread:groceries stray:home");
    sqlite3_close(db);

    /* The model cache: v2, derived attributes and all, with v2's version hashes. */
    cdm_model *cached = NULL;
    CHECK_RC(cdm_model_from_store(destination, &cached), CDM_OK);
    char *warnings = NULL;
    CHECK_RC(cdm_model_warnings_json(cached, &warnings), CDM_OK);
    CHECK_STR(warnings, "[]");   /* read from the cache, not rebuilt from the schema */
    cdm_free(warnings);
    char *json = NULL;
    CHECK_RC(cdm_model_json(cached, &json), CDM_OK);
    CHECK_HAS(json, "count:(items)");      /* Core Data's form of items.@count */
    CHECK_HAS(json, "sum:(items.price)");
    CHECK_HAS(json, "items.price.@max");
    CHECK_HAS(json, "uppercase:(name)");
    CHECK_HAS(json, "now()");
    CHECK_HAS(json, "list.name");
    cdm_free(json);
    char expected[512], found[512];
    version_hashes(v2, expected, sizeof expected);
    version_hashes(cached, found, sizeof found);
    CHECK(strlen(expected) > 40);
    CHECK_STR(found, expected);
    cdm_model_free(cached);
    cdm_model_free(v1);
    cdm_model_free(v2);
    return scratch_end("derived_attribute_test: ");
}
