/* Scenario 3 in C: Event { timeStamp: Date } becomes PrintedEvent (a medium date and time) and
** NumericEvent (seconds since 1970), with two mapping models run as two passes into one
** destination: StepOne makes the PrintedEvents through the custom policy
** StepOneEntityMigrationPolicy (here C hooks), StepTwo the NumericEvents with a value expression.
** The destination is never the source; after success the new store takes the old one's place
** (cdm_migration_run_in_place). */
#include "example.h"
#include <math.h>

#define EVENTS 2000
#define UNIX_OFFSET 978307200.0   /* seconds from 1970 to 2001 */
static double stamps[EVENTS];     /* seconds since 2001 */

/* What DateFormatter (en_US, medium date and time, UTC) prints: "Sep 12, 2017 at 12:55:13 PM".
** Fractions of a second are dropped (towards the past).
** Any year prints (a date is a double of seconds since 2001: year 11507 too); returns 0 (no text)
** when the time stamp is not finite or more than 1e15 seconds from 2001, as Swift and Python. */
static int medium_date(double since2001, char *out, size_t size) {
    static const char *months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    if (!isfinite(since2001) || fabs(since2001) > 1e15) return 0;
    int64_t total = (int64_t)floor(since2001 + UNIX_OFFSET);
    int64_t days = total >= 0 ? total / 86400 : (total - 86399) / 86400;
    int64_t second_of_day = total - days * 86400;
    /* Howard Hinnant's civil_from_days. */
    int64_t z = days + 719468, era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097, yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100), mp = (5 * doy + 2) / 153;
    int day = (int)(doy - (153 * mp + 2) / 5 + 1), month = (int)(mp < 10 ? mp + 3 : mp - 9);
    int64_t year = yoe + era * 400 + (month <= 2);
    int hour = (int)(second_of_day / 3600), minute = (int)(second_of_day / 60 % 60), second = (int)(second_of_day % 60);
    snprintf(out, size, "%s %d, %lld at %d:%02d:%02d %s", months[month - 1], day, (long long)year,
             hour % 12 == 0 ? 12 : hour % 12, minute, second, hour < 12 ? "AM" : "PM");
    return 1;
}

/* StepOneEntityMigrationPolicy: one PrintedEvent per Event, its printedDate the formatted time stamp
** (nil stays nil; a time stamp with no text fails the migration with code 5, as Swift and Python). */
static int step_one_create(cdm_context *ctx, cdm_object *source, void *user) {
    (void)user;
    double seconds = 0;
    int is_null = 0;
    TRY(cdm_object_get_date(source, "timeStamp", &seconds, &is_null));
    cdm_object *printed = NULL;
    TRY(cdm_context_create_instance(ctx, "PrintedEvent", &printed));
    if (!is_null) {
        char text[96];
        if (!medium_date(seconds, text, sizeof text))
            return cdm_context_fail(ctx, CDM_EXPRESSION_EVALUATION, "StepOneEntityMigrationPolicy: the date is out of range");
        TRY(cdm_object_set_text(printed, "printedDate", text, CDM_NUL_TERMINATED));
    }
    return cdm_context_associate(ctx, source, printed);
}

static void generate(const char *path) {
    cdm_model *model = load_model("3-events-two-passes/EventsV1.model.json");
    cdm_store *store = NULL;
    MUST(cdm_store_create(model, path, &store));
    /* Edge cases, then random instants from 1965 to 2035 with milliseconds, all different. */
    stamps[0] = 0;                                   /* the reference date */
    stamps[1] = -UNIX_OFFSET - 0.5;                  /* half a second before 1970 */
    stamps[2] = 12 * 3600;                           /* noon */
    stamps[3] = 99705600.0 + 13 * 3600 + 0.25;            /* a leap day: 2004-02-29 1:00:00 PM */
    rng r = {1970};
    for (int i = 4; i < EVENTS; i++) stamps[i] = -1136073600.0 + floor(rng_unit(&r) * 2209075200000.0) / 1000.0;
    for (int i = 0; i < EVENTS; i++) {
        cdm_object *event = NULL;
        MUST(cdm_store_insert(store, "Event", &event));
        MUST(cdm_object_set_date(event, "timeStamp", stamps[i]));
        cdm_object_release(event);
    }
    MUST(cdm_store_save(store));
    cdm_store_close(store);
    cdm_model_free(model);
}

static cdm_migration *events_migration(void) {
    const char *passes[] = {"3-events-two-passes/StepOne.mapping.json", "3-events-two-passes/StepTwo.mapping.json"};
    cdm_migration *migration = load_migration("3-events-two-passes/EventsV1.model.json", "3-events-two-passes/EventsV2.model.json", passes, 2);
    cdm_policy hooks = {0};
    hooks.create_destination_instances = step_one_create;
    MUST(cdm_migration_register_policy(migration, "StepOneEntityMigrationPolicy", &hooks, sizeof hooks, NULL, NULL));
    return migration;
}

static void check(const char *path) {
    sqlite3 *db = open_result(path);
    CHECK(scalar(db, "SELECT (SELECT COUNT(*) FROM ZNUMERICEVENT) + (SELECT COUNT(*) FROM ZPRINTEDEVENT)") == 2 * EVENTS);
    sqlite3_stmt *st = query(db, "SELECT n.ZTIMESTAMP, p.ZPRINTEDDATE FROM ZNUMERICEVENT n JOIN ZPRINTEDEVENT p ON p.Z_PK = n.Z_PK ORDER BY n.Z_PK");
    int row = 0;
    while (st && sqlite3_step(st) == SQLITE_ROW && row < EVENTS) {
        char text[96];
        medium_date(stamps[row], text, sizeof text);
        CHECK(sqlite3_column_double(st, 0) == stamps[row] + UNIX_OFFSET);   /* exactly */
        CHECK_STR(column_text(st, 1), text);
        row++;
    }
    CHECK(row == EVENTS);
    sqlite3_finalize(st);
    sqlite3_close(db);
}

int main(int argc, char **argv) {
    const char *source, *destination;
    if (source_mode(argc, argv, &source, &destination)) {
        cdm_migration *migration = events_migration();
        int status = source_mode_status(cdm_migration_run(migration, source, destination), migration);
        cdm_migration_free(migration);
        return status;
    }
    example_begin();
    char text[96];
    medium_date(0, text, sizeof text);
    CHECK_STR(text, "Jan 1, 2001 at 12:00:00 AM");
    medium_date(-UNIX_OFFSET - 0.5, text, sizeof text);
    CHECK_STR(text, "Dec 31, 1969 at 11:59:59 PM");
    medium_date(526913713.0, text, sizeof text);
    CHECK_STR(text, "Sep 12, 2017 at 12:55:13 PM");
    medium_date(99705600.0 + 13 * 3600 + 0.25, text, sizeof text);
    CHECK_STR(text, "Feb 29, 2004 at 1:00:00 PM");
    medium_date(299985683696.75, text, sizeof text);
    CHECK_STR(text, "Mar 4, 11507 at 12:34:56 PM");
    CHECK(!medium_date(1e300, text, sizeof text));

    source = store_path("Events.sqlite");
    destination = store_path("Events-v2.sqlite");
    generate(source);
    long before_size = 0, after_size = 0;
    unsigned char *before = read_whole_file(source, &before_size);
    cdm_migration *migration = events_migration();
    /* The destination is never the source. */
    CHECK(cdm_migration_run(migration, source, source) == CDM_MIGRATION_MANAGER_DESTINATION_STORE);
    if (run_migration(migration, source, destination) == CDM_OK) check(destination);
    unsigned char *after = read_whole_file(source, &after_size);
    CHECK(before && after && before_size == after_size && memcmp(before, after, (size_t)before_size) == 0);
    free(after);
    /* It refuses an existing destination too. */
    CHECK(cdm_migration_run(migration, source, destination) == CDM_MIGRATION_MANAGER_DESTINATION_STORE);
    /* After success the old store can be replaced by the new one: in place, atomically. */
    const char *copy = store_path("Events-in-place.sqlite");
    FILE *f = fopen(copy, "wb");
    CHECK(f && fwrite(before, 1, (size_t)before_size, f) == (size_t)before_size);
    if (f) fclose(f);
    MUST(cdm_migration_run_in_place(migration, copy));
    check(copy);
    free(before);
    cdm_migration_free(migration);
    return example_end("3 events-two-passes");
}
