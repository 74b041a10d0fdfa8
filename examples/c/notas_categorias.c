/* Scenario 1 in C: a free-text Nota.categoria becomes Categoria entities (many-to-many), made by
** the custom policy CrearCategoriasMigrationPolicy, which keeps its state (name → the Categoria it
** made) across calls — as the Swift version keeps a dictionary. C cannot keep instance handles
** past a callback, so it keeps the instance's primary key and gets it back with
** cdm_context_instance_with_id. Names are compared and stored in Unicode NFC (unicode_text.h), so
** "Música" precomposed and with a combining accent are one Categoria, as in Swift and Python.
**
** The same policy is written twice: crear_create with Core Data's single-row hook (one source
** instance per call, as NSEntityMigrationPolicy has it), and crear_create_batch with cdmigrate's
** batch hook, the way docs/c-api.md recommends for speed — per batch of notes, Core Data's default
** for all of them in one call, the "categoria" column as C arrays (no JSON to parse), the new
** Categorias in one call and every note ↔ Categoria pair in one call. The example runs the
** migration both ways and checks both destinations against the generator and against each other. */
#include "example.h"
#include "unicode_text.h"

#define NOTES 800
static const char *CATEGORIES[] = {"Trabajo", "Personal", "Ideas", "Compras", "Viajes", "Recetas", "Música", "Año nuevo",
                                   "Lecturas", "Salud", "Familia", "Proyectos", "Películas", "Deportes"};
#define CATEGORY_COUNT 14
static const char *WORDS[] = {"reunión", "mañana", "comprar", "llamar", "revisar", "el", "la", "proyecto", "café", "libro",
                              "canción", "viaje", "a", "Sevilla", "informe", "pendiente", "lista", "de", "ideas", "nuevo"};

/* What the generator made, to check the destination against. */
static char categoria_of[NOTES][32];   /* "" = none (nil or empty) */
static int has_categoria[NOTES];       /* 0 nil, 1 set (possibly empty) */

static void generate(const char *path) {
    cdm_model *model = load_model("1-notas-categorias/NotasV2.model.json");
    cdm_store *store = NULL;
    MUST(cdm_store_create(model, path, &store));
    rng r = {2015};
    for (int i = 0; i < NOTES; i++) {
        char contenido[256];
        int n = snprintf(contenido, sizeof contenido, "Nota %d:", i);
        for (int w = 0, words = 3 + rng_below(&r, 12); w < words; w++)
            n += snprintf(contenido + n, sizeof contenido - (size_t)n, " %s", WORDS[rng_below(&r, 20)]);
        double fecha = 441763200.0 + rng_unit(&r) * (6 * 365.25 * 86400);   /* 2015–2020, seconds since 2001 */
        char etiquetas[64] = "";
        if (rng_below(&r, 3)) snprintf(etiquetas, sizeof etiquetas, "%s,%s", WORDS[rng_below(&r, 20)], WORDS[rng_below(&r, 20)]);
        int roll = rng_below(&r, 100);
        const char *categoria = NULL;
        if (roll < 20) categoria = NULL;
        else if (roll < 23) categoria = "";
        else {
            /* Skewed: the first categories are much more common. */
            double u = rng_unit(&r);
            categoria = CATEGORIES[(int)(u * u * CATEGORY_COUNT)];
        }
        cdm_object *nota = NULL;
        MUST(cdm_store_insert(store, "Nota", &nota));
        cdm_field fields[4] = {cdm_field_text("contenido", contenido), cdm_field_date("fecha", fecha),
                               *etiquetas ? cdm_field_text("etiquetas", etiquetas) : cdm_field_null("etiquetas"),
                               categoria ? cdm_field_text("categoria", categoria) : cdm_field_null("categoria")};
        MUST(cdm_object_set_fields(nota, fields, 4, 0));
        cdm_object_release(nota);
        has_categoria[i] = categoria != NULL;
        snprintf(categoria_of[i], sizeof categoria_of[i], "%s", categoria ? categoria : "");
    }
    MUST(cdm_store_save(store));
    cdm_store_close(store);
    cdm_model_free(model);
}

/* The policy: name → primary key of the Categoria made for it, for the whole migration. */
typedef struct { char name[128]; int64_t pk; } made_categoria;
typedef struct { made_categoria made[256]; int count; } crear_categorias;

static int crear_create(cdm_context *ctx, cdm_object *source, void *user) {
    crear_categorias *policy = user;
    cdm_object *nota = NULL;
    TRY(cdm_context_create_instance(ctx, "Nota", &nota));
    TRY(cdm_context_apply_attribute_mappings(ctx, source, nota));
    const char *name = NULL; size_t length = 0; int is_null = 0;
    TRY(cdm_object_get_text(source, "categoria", &name, &length, &is_null));
    if (!is_null && length > 0) {
        char *nombre = text_nfc(name, length);
        if (!nombre) return cdm_context_fail(ctx, CDM_ENTITY_MIGRATION_POLICY, "out of memory");
        cdm_object *categoria = NULL;
        int rc = CDM_OK;
        for (int i = 0; i < policy->count && !categoria && rc == CDM_OK; i++)
            if (!strcmp(policy->made[i].name, nombre))
                rc = cdm_context_instance_with_id(ctx, CDM_STORE_DESTINATION, "Categoria", policy->made[i].pk, &categoria);
        if (rc == CDM_OK && !categoria) {
            if (policy->count == 256 || strlen(nombre) >= sizeof policy->made[0].name)
                rc = cdm_context_fail(ctx, CDM_ENTITY_MIGRATION_POLICY, "too many or too long categories for this example");
            if (rc == CDM_OK) rc = cdm_context_create_instance(ctx, "Categoria", &categoria);
            if (rc == CDM_OK) rc = cdm_object_set_text(categoria, "nombre", nombre, CDM_NUL_TERMINATED);
            if (rc == CDM_OK) {
                made_categoria *m = &policy->made[policy->count++];
                snprintf(m->name, sizeof m->name, "%s", nombre);
                rc = cdm_object_id(categoria, NULL, NULL, &m->pk);
            }
        }
        free(nombre);
        TRY(rc);
        TRY(cdm_object_add_object(nota, "categorias", categoria));
    }
    return cdm_context_associate(ctx, source, nota);
}

/* The same policy with the batch hook (crear_create_batch), in a header the benchmark shares. */
#include "crear_categorias_lote.h"

/* Every row of the destination's tables (Core Data's Z_ tables of notes, categories and their
** join table), in one text, to compare two destinations. Caller frees. */
static char *dump(const char *path) {
    sqlite3 *db = open_result(path);
    const char *tables[] = {"ZNOTA", "ZCATEGORIA", "Z_1NOTAS"};
    size_t size = 1 << 16, used = 0;
    char *text = malloc(size);
    if (!text) return NULL;
    text[0] = 0;
    for (int t = 0; t < 3; t++) {
        char sql[128];
        snprintf(sql, sizeof sql, "SELECT * FROM %s ORDER BY 1, 2", tables[t]);
        sqlite3_stmt *st = query(db, sql);
        while (st && sqlite3_step(st) == SQLITE_ROW) {
            for (int c = 0; c < sqlite3_column_count(st); c++) {
                const char *value = column_text(st, c);
                size_t need = strlen(tables[t]) + (value ? strlen(value) : 4) + 4;
                if (used + need >= size) {
                    char *bigger = realloc(text, size * 2);
                    if (!bigger) { free(text); sqlite3_finalize(st); sqlite3_close(db); return NULL; }
                    text = bigger;
                    size *= 2;
                }
                used += (size_t)snprintf(text + used, size - used, "%s%s%s", c ? "|" : tables[t], c ? "" : ":", value ? value : "NULL");
            }
            text[used++] = '\n';
            text[used] = 0;
        }
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
    return text;
}

static void check(const char *path) {
    sqlite3 *db = open_result(path);
    int distinct = 0;
    for (int c = 0; c < CATEGORY_COUNT; c++) {
        int used = 0;
        for (int i = 0; i < NOTES && !used; i++) used = !strcmp(categoria_of[i], CATEGORIES[c]);
        distinct += used;
    }
    CHECK(scalar(db, "SELECT COUNT(*) FROM ZCATEGORIA") == distinct);
    CHECK(scalar(db, "SELECT COUNT(DISTINCT ZNOMBRE) FROM ZCATEGORIA") == distinct);   /* no duplicates */
    CHECK(scalar(db, "SELECT COUNT(*) FROM ZNOTA") == NOTES);
    /* Every note: its category, and only that one (Z_1NOTAS is the join table of Nota.categorias ↔ Categoria.notas). */
    sqlite3_stmt *st = query(db,
        "SELECT n.ZCONTENIDO, (SELECT group_concat(c.ZNOMBRE, '|') FROM Z_1NOTAS j JOIN ZCATEGORIA c ON c.Z_PK = j.Z_1CATEGORIAS WHERE j.Z_2NOTAS = n.Z_PK) "
        "FROM ZNOTA n ORDER BY n.Z_PK");
    int row = 0;
    while (st && sqlite3_step(st) == SQLITE_ROW && row < NOTES) {
        char prefix[32];
        snprintf(prefix, sizeof prefix, "Nota %d:", row);
        CHECK(column_text(st, 0) && !strncmp(column_text(st, 0), prefix, strlen(prefix)));
        CHECK_STR(column_text(st, 1), *categoria_of[row] ? categoria_of[row] : NULL);
        row++;
    }
    CHECK(row == NOTES);
    sqlite3_finalize(st);
    /* The inverse: each Categoria.notas is exactly the notes that had its string. */
    for (int c = 0; c < CATEGORY_COUNT; c++) {
        int expected = 0;
        for (int i = 0; i < NOTES; i++) expected += !strcmp(categoria_of[i], CATEGORIES[c]);
        char sql[256];
        snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM Z_1NOTAS j JOIN ZCATEGORIA c ON c.Z_PK = j.Z_1CATEGORIAS WHERE c.ZNOMBRE = '%s'", CATEGORIES[c]);
        CHECK(scalar(db, sql) == expected);
    }
    int without = 0;
    for (int i = 0; i < NOTES; i++) without += !*categoria_of[i];
    CHECK(scalar(db, "SELECT COUNT(*) FROM ZNOTA n WHERE NOT EXISTS (SELECT 1 FROM Z_1NOTAS j WHERE j.Z_2NOTAS = n.Z_PK)") == without);
    sqlite3_close(db);
}

int main(int argc, char **argv) {
    const char *source, *destination;
    int given = source_mode(argc, argv, &source, &destination);
    const char *mappings[] = {"1-notas-categorias/NotasV2ToV3.mapping.json"};
    cdm_migration *migration = load_migration("1-notas-categorias/NotasV2.model.json", "1-notas-categorias/NotasV3.model.json", mappings, 1);
    static crear_categorias policy;
    cdm_policy hooks = {0};
    hooks.create_destination_instances = crear_create;
    MUST(cdm_migration_register_policy(migration, "CrearCategoriasMigrationPolicy", &hooks, sizeof hooks, &policy, NULL));
    if (given) {
        int rc = cdm_migration_run(migration, source, destination);
        int status = source_mode_status(rc, migration);
        cdm_migration_free(migration);
        return status;
    }
    example_begin();
    /* NFC on its own: a combining accent composed, Hangul jamo made a syllable, the rest untouched. */
    const char *nfc_cases[][2] = {{"Mu\xcc\x81sica", "Música"}, {"An\xcc\x83o nuevo", "Año nuevo"}, {"Música", "Música"},
                                  {"\xe1\x84\x92\xe1\x85\xa1\xe1\x86\xab", "한"}, {"a\xcc\xa3\xcc\x82", "ậ"}, {"🎵 x\xcc\x81", "🎵 x\xcc\x81"}};
    for (size_t i = 0; i < sizeof nfc_cases / sizeof nfc_cases[0]; i++) {
        char *nfc = text_nfc(nfc_cases[i][0], strlen(nfc_cases[i][0]));
        CHECK_STR(nfc, nfc_cases[i][1]);
        free(nfc);
    }
    source = store_path("Notas-v2.sqlite");
    destination = store_path("Notas-v3.sqlite");
    generate(source);
    if (run_migration(migration, source, destination) == CDM_OK) check(destination);
    cdm_migration_free(migration);

    /* The same migration with the batch hook, in batches of 300 notes (three batches, the last
    ** one short; 5,000 by default), into a second destination. */
    migration = load_migration("1-notas-categorias/NotasV2.model.json", "1-notas-categorias/NotasV3.model.json", mappings, 1);
    static crear_categorias_lote lote;
    cdm_policy batch_hooks = {0};
    batch_hooks.create_destination_instances_batch = crear_create_batch;
    MUST(cdm_migration_register_policy(migration, "CrearCategoriasMigrationPolicy", &batch_hooks, sizeof batch_hooks, &lote, NULL));
    MUST(cdm_migration_set_batch_size(migration, 300));
    const char *batched = store_path("Notas-v3-lotes.sqlite");
    if (run_migration(migration, source, batched) == CDM_OK) {
        check(batched);
        /* Both ways give the same store, row for row. */
        char *one = dump(destination), *other = dump(batched);
        CHECK(one && other && strlen(one) > 1000);
        CHECK_STR(one, other);
        free(one);
        free(other);
    }
    cdm_migration_free(migration);
    return example_end("1 notas-categorias");
}
