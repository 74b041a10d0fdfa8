/* The C-policy paths of the benchmark: reference migration 1 (Nota.categoria becomes Categoria
** entities) with the policy written as examples/c/notas_categorias.c writes it, either way:
**   c_policy batch EXAMPLES_DIR SOURCE DESTINATION   the batch hook (path c-policy, the recommended way)
**   c_policy rows  EXAMPLES_DIR SOURCE DESTINATION   the single-row hooks (path c-policy-rows)
** Prints the seconds the migration took (cdm_migration_run alone) on standard output. The batch
** policy is the example's, NFC included (it runs once per distinct source text); the single-row
** one is the example's without NFC, as measured before. */
#include <cdmigrate.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "../examples/c/unicode_text.h"

#define TRY(expr) do { int rc_ = (expr); if (rc_ != CDM_OK) return rc_; } while (0)

typedef struct { char name[64]; int64_t pk; } made_categoria;
typedef struct { made_categoria made[256]; int count; } crear_categorias;

static int crear_create(cdm_context *ctx, cdm_object *source, void *user) {
    crear_categorias *policy = user;
    cdm_object *nota = NULL;
    TRY(cdm_context_create_instance(ctx, "Nota", &nota));
    TRY(cdm_context_apply_attribute_mappings(ctx, source, nota));
    const char *name = NULL; size_t length = 0; int is_null = 0;
    TRY(cdm_object_get_text(source, "categoria", &name, &length, &is_null));
    if (!is_null && length > 0) {
        cdm_object *categoria = NULL;
        for (int i = 0; i < policy->count && !categoria; i++)
            if (!strcmp(policy->made[i].name, name))
                TRY(cdm_context_instance_with_id(ctx, CDM_STORE_DESTINATION, "Categoria", policy->made[i].pk, &categoria));
        if (!categoria) {
            if (policy->count == 256 || length >= sizeof policy->made[0].name)
                return cdm_context_fail(ctx, CDM_ENTITY_MIGRATION_POLICY, "too many or too long categories");
            TRY(cdm_context_create_instance(ctx, "Categoria", &categoria));
            TRY(cdm_object_set_text(categoria, "nombre", name, (long)length));
            made_categoria *m = &policy->made[policy->count++];
            snprintf(m->name, sizeof m->name, "%s", name);
            TRY(cdm_object_id(categoria, NULL, NULL, &m->pk));
        }
        TRY(cdm_object_add_object(nota, "categorias", categoria));
    }
    return cdm_context_associate(ctx, source, nota);
}

/* The batch policy, as examples/c/notas_categorias.c writes it (crear_create_batch). */
typedef struct { char name[128]; int64_t pk; } lote_categoria;
typedef struct { char text[128]; size_t length; int slot; } lote_texto;
typedef struct {
    lote_categoria made[256]; int count;
    lote_texto seen[512]; int seen_count;
} crear_categorias_lote;

static int json_append_string(char *json, size_t size, size_t *used, const char *text) {
    size_t n = *used;
    if (n + 1 >= size) return 0;
    json[n++] = '"';
    for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
        if (n + 7 >= size) return 0;
        if (*c == '"' || *c == '\\') { json[n++] = '\\'; json[n++] = (char)*c; }
        else if (*c < 0x20) n += (size_t)snprintf(json + n, size - n, "\\u%04x", *c);
        else json[n++] = (char)*c;
    }
    if (n + 1 >= size) return 0;
    json[n++] = '"';
    json[n] = 0;
    *used = n;
    return 1;
}

static int lote_slot(cdm_context *ctx, crear_categorias_lote *policy, const char *text, size_t length) {
    for (int i = 0; i < policy->seen_count; i++)
        if (policy->seen[i].length == length && !memcmp(policy->seen[i].text, text, length)) return policy->seen[i].slot;
    char *nombre = text_nfc(text, length);
    if (!nombre) return cdm_context_fail(ctx, CDM_ENTITY_MIGRATION_POLICY, "out of memory"), -1;
    int slot = -1;
    for (int i = 0; i < policy->count && slot < 0; i++)
        if (!strcmp(policy->made[i].name, nombre)) slot = i;
    if (slot < 0) {
        if (policy->count == 256 || strlen(nombre) >= sizeof policy->made[0].name) {
            free(nombre);
            return cdm_context_fail(ctx, CDM_ENTITY_MIGRATION_POLICY, "too many or too long categories"), -1;
        }
        slot = policy->count++;
        snprintf(policy->made[slot].name, sizeof policy->made[slot].name, "%s", nombre);
        policy->made[slot].pk = 0;
    }
    free(nombre);
    if (policy->seen_count < 512 && length < sizeof policy->seen[0].text) {
        lote_texto *t = &policy->seen[policy->seen_count++];
        memcpy(t->text, text, length);
        t->length = length;
        t->slot = slot;
    }
    return slot;
}

static int crear_create_batch(cdm_context *ctx, cdm_batch *batch, void *user) {
    crear_categorias_lote *policy = user;
    const int64_t *notas = NULL;
    size_t count = 0;
    TRY(cdm_batch_apply_default(batch, &notas, &count));
    const char *const *names = NULL;
    const size_t *lengths = NULL;
    size_t rows = 0;
    TRY(cdm_batch_column_text(batch, "categoria", &names, &lengths, &rows));
    if (rows != count) return cdm_context_fail(ctx, CDM_ENTITY_MIGRATION_POLICY, "the batch's notes and categories differ in number");
    int *slots = malloc(count * sizeof *slots);
    int64_t *owners = malloc(count * sizeof *owners), *targets = malloc(count * sizeof *targets);
    int rc = slots && owners && targets ? CDM_OK : cdm_context_fail(ctx, CDM_ENTITY_MIGRATION_POLICY, "out of memory");
    int first_new = policy->count;
    for (size_t i = 0; i < count && rc == CDM_OK; i++) {
        slots[i] = names[i] && lengths[i] > 0 ? lote_slot(ctx, policy, names[i], lengths[i]) : -2;
        if (slots[i] == -1) rc = cdm_context_errcode(ctx);
    }
    if (rc == CDM_OK && policy->count > first_new) {
        char json[256 * 160];
        size_t used = 0;
        json[used++] = '[';
        for (int i = first_new; i < policy->count && rc == CDM_OK; i++) {
            used += (size_t)snprintf(json + used, sizeof json - used, "%s{\"nombre\": ", i > first_new ? ", " : "");
            if (used >= sizeof json || !json_append_string(json, sizeof json - 2, &used, policy->made[i].name))
                rc = cdm_context_fail(ctx, CDM_ENTITY_MIGRATION_POLICY, "too many new categories");
            else json[used++] = '}';
        }
        json[used++] = ']';
        json[used] = 0;
        const int64_t *keys = NULL;
        size_t made = 0;
        if (rc == CDM_OK) rc = cdm_context_create_instances_json(ctx, "Categoria", json, &keys, &made);
        if (rc == CDM_OK && made != (size_t)(policy->count - first_new))
            rc = cdm_context_fail(ctx, CDM_ENTITY_MIGRATION_POLICY, "not every new category was made");
        for (int i = first_new; i < policy->count && rc == CDM_OK; i++) policy->made[i].pk = keys[i - first_new];
    }
    size_t pairs = 0;
    for (size_t i = 0; i < count && rc == CDM_OK; i++)
        if (slots[i] >= 0) {
            owners[pairs] = notas[i];
            targets[pairs++] = policy->made[slots[i]].pk;
        }
    if (rc == CDM_OK) rc = cdm_context_relate(ctx, "Nota", "categorias", owners, targets, pairs);
    free(slots);
    free(owners);
    free(targets);
    return rc;
}

static int load(const char *dir, const char *file, int mapping, void **out) {
    char path[4096];
    snprintf(path, sizeof path, "%s/1-notas-categorias/%s", dir, file);
    return mapping ? cdm_mapping_from_file(path, (cdm_mapping **)out) : cdm_model_from_file(path, (cdm_model **)out);
}

int main(int argc, char **argv) {
    int batched = argc == 5 && !strcmp(argv[1], "batch");
    if (argc != 5 || (!batched && strcmp(argv[1], "rows"))) {
        fprintf(stderr, "usage: c_policy batch|rows EXAMPLES_DIR SOURCE DESTINATION\n");
        return 2;
    }
    const char *examples = argv[2], *source = argv[3], *destination = argv[4];
    cdm_model *v2 = NULL, *v3 = NULL;
    cdm_mapping *mapping = NULL;
    cdm_migration *migration = NULL;
    int rc = load(examples, "NotasV2.model.json", 0, (void **)&v2);
    if (rc == CDM_OK) rc = load(examples, "NotasV3.model.json", 0, (void **)&v3);
    if (rc == CDM_OK) rc = load(examples, "NotasV2ToV3.mapping.json", 1, (void **)&mapping);
    if (rc == CDM_OK) rc = cdm_migration_new(v2, v3, &mapping, 1, &migration);
    static crear_categorias policy;
    static crear_categorias_lote lote;
    cdm_policy hooks = {0};
    if (batched) hooks.create_destination_instances_batch = crear_create_batch;
    else hooks.create_destination_instances = crear_create;
    if (rc == CDM_OK)
        rc = cdm_migration_register_policy(migration, "CrearCategoriasMigrationPolicy", &hooks, sizeof hooks,
                                           batched ? (void *)&lote : (void *)&policy, NULL);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (rc == CDM_OK) rc = cdm_migration_run(migration, source, destination);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (rc != CDM_OK) fprintf(stderr, "c_policy: error %d: %s\n", rc, migration ? cdm_migration_errmsg(migration) : "cannot load the models");
    else printf("%.6f\n", (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
    cdm_migration_free(migration);
    cdm_mapping_free(mapping);
    cdm_model_free(v3);
    cdm_model_free(v2);
    return rc == CDM_OK ? 0 : 1;
}
