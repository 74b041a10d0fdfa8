/* Reference migration 1's policy written with cdmigrate's batch hook (crear_create_batch), shared
** by examples/c/notas_categorias.c and the benchmark (bench/c_policy.c), so that the benchmark
** measures the policy as the example writes it. Per batch of notes: Core Data's default for every
** note in one call (cdm_batch_apply_default), the old "categoria" texts in one call
** (cdm_batch_column_text), the Categorias not seen before in one call
** (cdm_context_create_instances_json), every note ↔ Categoria link in one call
** (cdm_context_relate). Names are compared and stored in Unicode NFC (unicode_text.h). */
#ifndef CDM_CREAR_CATEGORIAS_LOTE_H
#define CDM_CREAR_CATEGORIAS_LOTE_H

#include <cdmigrate.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "unicode_text.h"

#ifndef TRY
#define TRY(expr) do { int rc_ = (expr); if (rc_ != CDM_OK) return rc_; } while (0)
#endif

/* The policy with the batch hook: name → key of the Categoria made for it, and a cache of the
** texts as the source has them (before NFC) → the same slot, so that a repeated name costs one
** comparison of bytes per note. */
typedef struct { char name[128]; int64_t pk; } lote_categoria;
typedef struct { char text[128]; size_t length; int slot; } lote_texto;
typedef struct {
    lote_categoria made[256]; int count;
    lote_texto seen[512]; int seen_count;
} crear_categorias_lote;

/* Appends `text` to `json` (capacity `size`, at `*used`) as a JSON string; 0 when it does not fit. */
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

/* The slot in policy->made of the Categoria for the source text (not NUL-terminated: `length`
** bytes), adding a slot with key 0 — to be made — for a name not seen before. -1 on failure. */
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
            return cdm_context_fail(ctx, CDM_ENTITY_MIGRATION_POLICY, "too many or too long categories for this example"), -1;
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
    /* Every note as Core Data's default makes it: instance, attribute mappings, association. */
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
    /* Each note's Categoria slot (-2: none); the names not seen before become slots with key 0. */
    int first_new = policy->count;
    for (size_t i = 0; i < count && rc == CDM_OK; i++) {
        slots[i] = names[i] && lengths[i] > 0 ? lote_slot(ctx, policy, names[i], lengths[i]) : -2;
        if (slots[i] == -1) rc = cdm_context_errcode(ctx);
    }
    /* The new Categorias of this batch in one call: [{"nombre": "…"}, …]. */
    if (rc == CDM_OK && policy->count > first_new) {
        char json[256 * 160];
        size_t used = 0;
        json[used++] = '[';
        for (int i = first_new; i < policy->count && rc == CDM_OK; i++) {
            used += (size_t)snprintf(json + used, sizeof json - used, "%s{\"nombre\": ", i > first_new ? ", " : "");
            if (used >= sizeof json || !json_append_string(json, sizeof json - 2, &used, policy->made[i].name))
                rc = cdm_context_fail(ctx, CDM_ENTITY_MIGRATION_POLICY, "too many new categories for this example");
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
    /* Every note ↔ Categoria pair of the batch in one call. */
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

#endif
