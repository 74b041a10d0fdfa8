/* Scenario 4 in C: UnCloudNotes. v3 → v4 generalises Attachment with the child entity
** ImageAttachment, through the course's policy AttachmentToImageAttachmentMigrationPolicyV3toV4
** written in C: apply the mapping's own attribute expressions, read width and height from the
** PNG's IHDR chunk, caption = the first 80 characters of note.body (shorter bodies taken whole).
** Then stores at v1, v2 and v3 all reach v4: the version is found by trying each step's source
** model (CDM_MIGRATION_MISSING_SOURCE_MODEL means "not this version") and the steps are chained
** through intermediate files. Images are real PNGs made by a tiny encoder (stored deflate). */
#include "example.h"
#include "unicode_text.h"

#define NOTES 240
#define DIR_ "4-uncloudnotes/"

/* ---- A tiny PNG encoder (RGB, 8 bits, zlib stored blocks) and the IHDR reader. */
static uint32_t crc_table[256];
static uint32_t crc32_of(const unsigned char *p, size_t n, uint32_t c) {
    if (!crc_table[1]) for (uint32_t i = 0; i < 256; i++) { uint32_t k = i; for (int j = 0; j < 8; j++) k = k & 1 ? 0xEDB88320u ^ (k >> 1) : k >> 1; crc_table[i] = k; }
    c = ~c;
    for (size_t i = 0; i < n; i++) c = crc_table[(c ^ p[i]) & 0xFF] ^ (c >> 8);
    return ~c;
}
static void put32(unsigned char *p, uint32_t v) { p[0] = (unsigned char)(v >> 24); p[1] = (unsigned char)(v >> 16); p[2] = (unsigned char)(v >> 8); p[3] = (unsigned char)v; }
static size_t chunk(unsigned char *out, const char *type, const unsigned char *data, size_t n) {
    put32(out, (uint32_t)n);
    memcpy(out + 4, type, 4);
    if (n) memcpy(out + 8, data, n);
    put32(out + 8 + n, crc32_of(out + 4, n + 4, 0));
    return n + 12;
}
/* Returns a malloc'd PNG of w × h pixels and its size. */
static unsigned char *png_encode(int w, int h, unsigned seed, size_t *size) {
    size_t raw_size = (size_t)h * (1 + 3 * (size_t)w), blocks = raw_size / 65535 + 1;
    unsigned char *raw = malloc(raw_size), *z = malloc(raw_size + 5 * blocks + 6), *png = malloc(raw_size + 5 * blocks + 6 + 64);
    for (int y = 0; y < h; y++) {
        unsigned char *row = raw + (size_t)y * (1 + 3 * (size_t)w);
        row[0] = 0;
        for (int x = 0; x < 3 * w; x++) row[1 + x] = (unsigned char)(seed + (unsigned)(x * 7 + y * 13));
    }
    size_t zn = 0, done = 0;
    z[zn++] = 0x78; z[zn++] = 0x01;
    do {
        size_t n = raw_size - done > 65535 ? 65535 : raw_size - done;
        z[zn++] = done + n == raw_size;
        z[zn++] = (unsigned char)n; z[zn++] = (unsigned char)(n >> 8);
        z[zn++] = (unsigned char)~n; z[zn++] = (unsigned char)(~n >> 8);
        memcpy(z + zn, raw + done, n);
        zn += n; done += n;
    } while (done < raw_size);
    uint32_t a = 1, b = 0;
    for (size_t i = 0; i < raw_size; i++) { a = (a + raw[i]) % 65521; b = (b + a) % 65521; }
    put32(z + zn, b << 16 | a); zn += 4;
    static const unsigned char signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
    unsigned char ihdr[13] = {0};
    put32(ihdr, (uint32_t)w); put32(ihdr + 4, (uint32_t)h);
    ihdr[8] = 8; ihdr[9] = 2;
    size_t n = 0;
    memcpy(png, signature, 8); n = 8;
    n += chunk(png + n, "IHDR", ihdr, 13);
    n += chunk(png + n, "IDAT", z, zn);
    n += chunk(png + n, "IEND", NULL, 0);
    free(raw); free(z);
    *size = n;
    return png;
}
/* Width and height from the IHDR; 0 × 0 for what is not a PNG. */
static void png_size(const unsigned char *p, size_t n, int *w, int *h) {
    *w = *h = 0;
    if (n < 24 || p[0] != 0x89 || memcmp(p + 1, "PNG", 3) || memcmp(p + 12, "IHDR", 4)) return;
    *w = (int)((uint32_t)p[16] << 24 | (uint32_t)p[17] << 16 | (uint32_t)p[18] << 8 | p[19]);
    *h = (int)((uint32_t)p[20] << 24 | (uint32_t)p[21] << 16 | (uint32_t)p[22] << 8 | p[23]);
}

/* The first 80 characters: extended grapheme clusters (unicode_text.h), as Swift's Character and
** the Python policy count them, so a flag, an emoji sequence or an accent is never cut. */
static size_t prefix_bytes(const char *text, size_t length, int characters) {
    return text_prefix_graphemes(text, length, (size_t)characters);
}

/* ---- The policy. */
static int image_attachment_create(cdm_context *ctx, cdm_object *source, void *user) {
    (void)user;
    cdm_object *attachment = NULL;
    TRY(cdm_context_create_instance(ctx, "ImageAttachment", &attachment));
    TRY(cdm_context_apply_attribute_mappings(ctx, source, attachment));
    const void *image = NULL; size_t size = 0; int is_null = 0;
    TRY(cdm_object_get_blob(source, "image", &image, &size, &is_null));
    int w = 0, h = 0;
    if (!is_null) png_size(image, size, &w, &h);
    TRY(cdm_object_set_double(attachment, "width", w));
    TRY(cdm_object_set_double(attachment, "height", h));
    cdm_object *note = NULL;
    TRY(cdm_object_get_object(source, "note", &note));
    const char *body = ""; size_t length = 0;
    if (note) TRY(cdm_object_get_text(note, "body", &body, &length, &is_null));
    TRY(cdm_object_set_text(attachment, "caption", body ? body : "", (long)prefix_bytes(body ? body : "", length, 80)));
    return cdm_context_associate(ctx, source, attachment);
}

/* ---- Data at version 1, 2 or 3. */
static const char *PIECES[] = {"Buy milk", "Meeting notes: ", "Café con leche ☕", "Ideas 💡 for the weekend", "👩‍💻 code review",
                               "Lorem ipsum dolor sit amet, consectetur adipiscing elit", "Ñandú y pingüino", "e\xcc\x81t\xc3\xa9 ", "x"};
static char bodies[NOTES][400];
static int expected_images;

static void make_body(int i, rng *r) {
    int target = i % 8 == 0 ? 0 : i % 8 == 1 ? 80 : i % 8 == 2 ? 81 : 40 + rng_below(r, 140);
    size_t n = 0;
    bodies[i][0] = 0;
    while ((int)prefix_bytes(bodies[i], n, 1000) < target && n < 300) {
        const char *piece = PIECES[rng_below(r, 9)];
        n += (size_t)snprintf(bodies[i] + n, sizeof bodies[i] - n, "%s ", piece);
    }
    if (target == 80 || target == 81) n = prefix_bytes(bodies[i], n, target);   /* exactly 80 or 81 characters */
    bodies[i][n] = 0;
}

static void generate(int version, const char *path) {
    char file[64];
    snprintf(file, sizeof file, DIR_ "UnCloudNotes_v%d.model.json", version);
    cdm_model *model = load_model(file);
    cdm_store *store = NULL;
    MUST(cdm_store_create(model, path, &store));
    rng r = {(uint64_t)version * 1000};
    expected_images = 0;
    for (int i = 0; i < NOTES; i++) {
        make_body(i, &r);
        char title[32];
        snprintf(title, sizeof title, "Note %03d", i);
        cdm_object *note = NULL;
        MUST(cdm_store_insert(store, "Note", &note));
        cdm_field fields[4] = {cdm_field_text("title", title), cdm_field_text("body", bodies[i]), cdm_field_int64("displayIndex", i),
                               cdm_field_date("dateCreated", 500000000.0 + i * 3600)};
        MUST(cdm_object_set_fields(note, fields, 4, 0));
        int images = version == 1 ? 0 : version == 2 ? rng_below(&r, 2) : rng_below(&r, 4);
        for (int k = 0; k < images; k++) {
            size_t size = 0;
            unsigned char *png = png_encode(1 + rng_below(&r, 160), 1 + rng_below(&r, 120), (unsigned)i, &size);
            if (version == 2) {
                MUST(cdm_object_set_blob(note, "image", png, size));
                expected_images++;
            } else {
                cdm_object *attachment = NULL;
                MUST(cdm_store_insert(store, "Attachment", &attachment));
                MUST(cdm_object_set_date(attachment, "dateCreated", 500000000.0 + i * 3600 + k));
                if (rng_below(&r, 5)) { MUST(cdm_object_set_blob(attachment, "image", png, size)); expected_images++; }
                MUST(cdm_object_set_object(attachment, "note", note));
                cdm_object_release(attachment);
            }
            free(png);
        }
        cdm_object_release(note);
    }
    if (version == 3) {   /* two attachments without a note */
        for (int k = 0; k < 2; k++) {
            cdm_object *attachment = NULL;
            size_t size = 0;
            unsigned char *png = png_encode(3 + k, 2, 9, &size);
            MUST(cdm_store_insert(store, "Attachment", &attachment));
            MUST(cdm_object_set_date(attachment, "dateCreated", 600000000.0));
            MUST(cdm_object_set_blob(attachment, "image", png, size));
            expected_images++;
            free(png);
        }
    }
    MUST(cdm_store_save(store));
    cdm_store_close(store);
    cdm_model_free(model);
}

/* ---- Any version to v4. */
static cdm_migration *step(int from) {
    char a[64], b[64], m[64];
    snprintf(a, sizeof a, DIR_ "UnCloudNotes_v%d.model.json", from);
    snprintf(b, sizeof b, DIR_ "UnCloudNotes_v%d.model.json", from + 1);
    snprintf(m, sizeof m, DIR_ "UnCloudNotes_v%d_to_v%d.mapping.json", from, from + 1);
    const char *mappings[] = {m};
    cdm_migration *migration = load_migration(a, b, mappings, 1);
    if (from == 3) {
        cdm_policy hooks = {0};
        hooks.create_destination_instances = image_attachment_create;
        MUST(cdm_migration_register_policy(migration, "AttachmentToImageAttachmentMigrationPolicyV3toV4", &hooks, sizeof hooks, NULL, NULL));
    }
    return migration;
}

/* Returns the version the store was at, or 0. */
static int migrate_to_v4(const char *path, const char *destination) {
    int found = 0;
    char current[512], next[512];
    snprintf(current, sizeof current, "%s", path);
    for (int from = 3; from >= 1 && !found; from--) {
        snprintf(next, sizeof next, "%s.v%d", destination, from + 1);
        cdm_migration *migration = step(from);
        int rc = cdm_migration_run(migration, current, from == 3 ? destination : next);
        cdm_migration_free(migration);
        if (rc == CDM_OK) found = from;
        else if (rc != CDM_MIGRATION_MISSING_SOURCE_MODEL) { fprintf(stderr, "error %d: v%d → v%d\n", rc, from, from + 1); return 0; }
    }
    for (int from = found + 1; found && found < 3 && from <= 3; from++) {
        snprintf(current, sizeof current, "%s.v%d", destination, from);
        snprintf(next, sizeof next, "%s.v%d", destination, from + 1);
        cdm_migration *migration = step(from);
        int rc = cdm_migration_run(migration, current, from == 3 ? destination : next);
        if (rc) fprintf(stderr, "v%d → v%d: %s\n", from, from + 1, cdm_migration_errmsg(migration));
        cdm_migration_free(migration);
        unlink(current);   /* intermediate files go */
        if (rc) return 0;
    }
    return found;
}

static void check(const char *path) {
    sqlite3 *db = open_result(path);
    CHECK(scalar(db, "SELECT COUNT(*) FROM ZNOTE") == NOTES);
    CHECK(scalar(db, "SELECT COUNT(*) FROM ZATTACHMENT a JOIN Z_PRIMARYKEY k ON k.Z_ENT = a.Z_ENT WHERE k.Z_NAME = 'ImageAttachment'") == expected_images);
    sqlite3_stmt *st = query(db, "SELECT n.ZTITLE, n.ZBODY FROM ZNOTE n ORDER BY n.ZTITLE");
    int row = 0;
    while (st && sqlite3_step(st) == SQLITE_ROW && row < NOTES) {
        char title[32];
        snprintf(title, sizeof title, "Note %03d", row);
        CHECK_STR(column_text(st, 0), title);
        CHECK_STR(column_text(st, 1), bodies[row]);
        row++;
    }
    sqlite3_finalize(st);
    /* Every image attachment: its size is its PNG's, its caption its note's first 80 characters. */
    st = query(db, "SELECT a.ZIMAGE, a.ZWIDTH, a.ZHEIGHT, a.ZCAPTION, n.ZTITLE FROM ZATTACHMENT a JOIN Z_PRIMARYKEY k ON k.Z_ENT = a.Z_ENT "
                   "LEFT JOIN ZNOTE n ON n.Z_PK = a.ZNOTE WHERE k.Z_NAME = 'ImageAttachment'");
    int images = 0;
    while (st && sqlite3_step(st) == SQLITE_ROW) {
        int w = 0, h = 0;
        png_size(sqlite3_column_blob(st, 0), (size_t)sqlite3_column_bytes(st, 0), &w, &h);
        CHECK(w > 0 && h > 0 && sqlite3_column_double(st, 1) == w && sqlite3_column_double(st, 2) == h);
        const char *title = column_text(st, 4);
        char caption[400] = "";
        if (title) {
            int i = atoi(title + 5);
            snprintf(caption, sizeof caption, "%.*s", (int)prefix_bytes(bodies[i], strlen(bodies[i]), 80), bodies[i]);
        }
        CHECK_STR(column_text(st, 3), caption);
        images++;
    }
    CHECK(images == expected_images);
    sqlite3_finalize(st);
    sqlite3_close(db);
}

int main(int argc, char **argv) {
    const char *given_source, *given_destination;
    if (source_mode(argc, argv, &given_source, &given_destination)) {
        int found = migrate_to_v4(given_source, given_destination);
        if (!found) fprintf(stderr, "error: %s was not migrated to v4\n", given_source);
        return found ? 0 : 1;
    }
    example_begin();
    /* The caption rule on its own: short bodies whole, emoji never cut. */
    CHECK(prefix_bytes("short", 5, 80) == 5);
    CHECK(prefix_bytes("👩‍💻x", strlen("👩‍💻x"), 1) == strlen("👩‍💻"));
    CHECK(prefix_bytes("e\xcc\x81x", 4, 1) == 3);
    CHECK(prefix_bytes("🇸🇪🇫🇮x", strlen("🇸🇪🇫🇮x"), 1) == strlen("🇸🇪"));
    CHECK(prefix_bytes("🇸🇪🇫🇮x", strlen("🇸🇪🇫🇮x"), 2) == strlen("🇸🇪🇫🇮"));
    CHECK(prefix_bytes("\r\nx", 3, 1) == 2);
    for (int version = 1; version <= 3; version++) {
        char source[64], destination[64];
        snprintf(source, sizeof source, "UnCloudNotes-v%d.sqlite", version);
        snprintf(destination, sizeof destination, "UnCloudNotes-v%d-to-v4.sqlite", version);
        char *src = strdup(store_path(source)), *dst = strdup(store_path(destination));
        generate(version, src);
        int found = migrate_to_v4(src, dst);
        CHECK(found == version);
        if (found) check(dst);
        free(src); free(dst);
    }
    return example_end("4 uncloudnotes");
}
