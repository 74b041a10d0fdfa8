/* The C-policy paths of the benchmark: reference migration 1 (Nota.categoria becomes Categoria
** entities) with the policy written as examples/c/notas_categorias.c writes it, either way:
**   c_policy batch EXAMPLES_DIR SOURCE DESTINATION   the batch hook (path c-policy, the recommended way)
**   c_policy rows  EXAMPLES_DIR SOURCE DESTINATION   the single-row hooks (path c-policy-rows)
** Prints the seconds the migration took (cdm_migration_run alone) on standard output, wall-clock then CPU. The batch
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

/* The batch policy: the example's own (crear_create_batch). */
#include "../examples/c/crear_categorias_lote.h"

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
    struct timespec t0, t1, c0, c1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
    if (rc == CDM_OK) rc = cdm_migration_run(migration, source, destination);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (rc != CDM_OK) fprintf(stderr, "c_policy: error %d: %s\n", rc, migration ? cdm_migration_errmsg(migration) : "cannot load the models");
    else printf("%.6f %.6f\n", (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
                (double)(c1.tv_sec - c0.tv_sec) + (double)(c1.tv_nsec - c0.tv_nsec) / 1e9);
    cdm_migration_free(migration);
    cdm_mapping_free(mapping);
    cdm_model_free(v3);
    cdm_model_free(v2);
    return rc == CDM_OK ? 0 : 1;
}
