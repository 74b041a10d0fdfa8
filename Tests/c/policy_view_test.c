/* C tests of what a policy sees of its migration (NSMigrationManager, NSEntityMapping,
** NSPropertyMapping): the models' version identifiers and entities, the mapping model of the
** pass, the entity mapping's type, a property mapping's userInfo, and a property mapping's value
** expression changed in begin for every instance of that run only. Prints "N passed, M failed"
** last; exits non-zero on any failure. */
#include <cdmigrate.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scratch.h"

static const char *MODEL_FORMAT =
    "{\"name\": \"Notes\", \"versionIdentifier\": \"%s\", \"entities\": [{\"name\": \"Note\", \"attributes\": ["
    " {\"name\": \"title\", \"type\": \"string\"}, {\"name\": \"body\", \"type\": \"string\", \"optional\": true}]}]}";
static const char *MAPPING =
    "{\"name\": \"Notes1to2\", \"entityMappings\": [{\"name\": \"NoteToNote\", \"type\": \"custom\", \"sourceEntity\": \"Note\","
    " \"destinationEntity\": \"Note\", \"predicate\": \"TRUEPREDICATE\", \"policy\": \"NotePolicy\", \"attributeMappings\": ["
    " {\"name\": \"title\", \"valueExpression\": \"$source.title\", \"userInfo\": {\"limit\": 3}},"
    " {\"name\": \"body\", \"valueExpression\": \"$source.body\"}]}]}";

typedef struct {
    int rewrite;
    char expression_seen[128];  /* the title's expression when begin started */
    char expression_set[128];   /* the title's expression after begin's change */
    char titles[128];           /* the destination's titles, by end */
} view_state;

static int begin(cdm_context *ctx, void *user) {
    view_state *s = user;
    const cdm_model *source = NULL, *destination = NULL;
    CHECK_RC(cdm_context_model(ctx, CDM_STORE_SOURCE, &source), CDM_OK);
    CHECK_RC(cdm_context_model(ctx, CDM_STORE_DESTINATION, &destination), CDM_OK);
    const char *text = NULL;
    CHECK_RC(cdm_model_version_identifier(source, &text), CDM_OK);
    CHECK_STR(text, "1");
    CHECK_RC(cdm_model_version_identifier(destination, &text), CDM_OK);
    CHECK_STR(text, "2");
    size_t count = 0;
    CHECK_RC(cdm_model_attribute_count(source, "Note", &count), CDM_OK);
    CHECK(count == 2);

    CHECK_RC(cdm_context_mapping_model_name(ctx, &text), CDM_OK);
    CHECK_STR(text, "Notes1to2");
    CHECK_RC(cdm_context_entity_mapping_count(ctx, &count), CDM_OK);
    CHECK(count == 1);
    CHECK_RC(cdm_context_entity_mapping_at(ctx, 0, &text), CDM_OK);
    CHECK_STR(text, "NoteToNote");
    CHECK_RC(cdm_context_entity_mapping_at(ctx, 1, &text), CDM_NOTFOUND);
    const char *source_entity = NULL, *destination_entity = NULL;
    CHECK_RC(cdm_context_entity_mapping_entities_at(ctx, 0, &source_entity, &destination_entity), CDM_OK);
    CHECK_STR(source_entity, "Note");
    CHECK_STR(destination_entity, "Note");
    CHECK_RC(cdm_context_entity_mapping_entities_at(ctx, 1, &source_entity, &destination_entity), CDM_NOTFOUND);
    CHECK_RC(cdm_context_entity_mapping_entities_at(ctx, 0, NULL, &destination_entity), CDM_MISUSE);
    CHECK_RC(cdm_context_entity_mapping_type(ctx, &text), CDM_OK);
    CHECK_STR(text, "custom");

    cdm_value *value = NULL;
    int64_t limit = 0;
    CHECK_RC(cdm_context_property_mapping_user_info_value(ctx, CDM_PROPERTY_ATTRIBUTE, "title", "limit", &value), CDM_OK);
    CHECK(value != NULL && cdm_value_int64(value, &limit) == CDM_OK && limit == 3);
    CHECK_RC(cdm_context_property_mapping_user_info_value(ctx, CDM_PROPERTY_ATTRIBUTE, "title", "missing", &value), CDM_OK);
    CHECK(value == NULL);
    CHECK_RC(cdm_context_property_mapping_user_info_value(ctx, CDM_PROPERTY_ATTRIBUTE, "subtitle", "limit", &value), CDM_NOTFOUND);
    CHECK_RC(cdm_context_property_mapping_user_info_count(ctx, CDM_PROPERTY_ATTRIBUTE, "title", &count), CDM_OK);
    CHECK(count == 1);
    CHECK_RC(cdm_context_property_mapping_user_info_value_at(ctx, CDM_PROPERTY_ATTRIBUTE, "title", 0, &text, &value), CDM_OK);
    CHECK_STR(text, "limit");
    CHECK(value != NULL && cdm_value_int64(value, &limit) == CDM_OK && limit == 3);
    CHECK_RC(cdm_context_property_mapping_user_info_value_at(ctx, CDM_PROPERTY_ATTRIBUTE, "title", 1, &text, &value), CDM_NOTFOUND);
    CHECK_RC(cdm_context_property_mapping_user_info_count(ctx, CDM_PROPERTY_ATTRIBUTE, "body", &count), CDM_OK);
    CHECK(count == 0);

    CHECK_RC(cdm_context_property_mapping(ctx, CDM_PROPERTY_ATTRIBUTE, "title", &text), CDM_OK);
    snprintf(s->expression_seen, sizeof s->expression_seen, "%s", text ? text : "(null)");
    /* An expression that does not parse is refused and changes nothing. */
    CHECK_RC(cdm_context_set_property_mapping_expression(ctx, CDM_PROPERTY_ATTRIBUTE, "title", "$source.title +"), CDM_EXPRESSION_SYNTAX);
    CHECK_HAS(cdm_context_errmsg(ctx), "property mapping 'title'");
    CHECK_RC(cdm_context_set_property_mapping_expression(ctx, CDM_PROPERTY_RELATIONSHIP, "title", "$source.title"), CDM_NOTFOUND);
    CHECK_RC(cdm_context_set_property_mapping_expression(ctx, 7, "title", "$source.title"), CDM_INVALID_ARGUMENT);
    if (s->rewrite) {
        CHECK_RC(cdm_context_set_property_mapping_expression(ctx, CDM_PROPERTY_ATTRIBUTE, "title", "FUNCTION($source.title, \"uppercaseString\")"), CDM_OK);
        CHECK_RC(cdm_context_set_property_mapping_expression(ctx, CDM_PROPERTY_ATTRIBUTE, "body", NULL), CDM_OK);
    }
    CHECK_RC(cdm_context_property_mapping(ctx, CDM_PROPERTY_ATTRIBUTE, "title", &text), CDM_OK);
    snprintf(s->expression_set, sizeof s->expression_set, "%s", text ? text : "(null)");
    return CDM_OK;
}

/* The destination's titles and bodies, by title: "title/body,…" ("-" for a null body). */
static int end(cdm_context *ctx, void *user) {
    view_state *s = user;
    cdm_list *list = NULL;
    cdm_sort_descriptor by_title = {"title", 1};
    CHECK_RC(cdm_context_fetch(ctx, CDM_STORE_DESTINATION, "Note", NULL, NULL, 0, &by_title, 1, 0, 0, &list), CDM_OK);
    size_t count = 0;
    CHECK_RC(cdm_list_count(list, &count), CDM_OK);
    s->titles[0] = 0;
    for (size_t i = 0; i < count; i++) {
        cdm_object *note = NULL;
        const char *title = NULL, *body = NULL;
        int null_body = 0;
        CHECK_RC(cdm_list_object_at(list, i, &note), CDM_OK);
        CHECK_RC(cdm_object_get_text(note, "title", &title, NULL, NULL), CDM_OK);
        CHECK_RC(cdm_object_get_text(note, "body", &body, NULL, &null_body), CDM_OK);
        size_t used = strlen(s->titles);
        snprintf(s->titles + used, sizeof s->titles - used, "%s%s/%s", i ? "," : "", title ? title : "?", null_body ? "-" : body);
    }
    return CDM_OK;
}

static int make_source(cdm_model *model, const char *path) {
    cdm_store *store = NULL;
    CHECK_RC(cdm_store_create(model, path, &store), CDM_OK);
    const char *titles[] = {"beta", "alpha", "gamma"};
    for (int i = 0; i < 3; i++) {
        cdm_object *note = NULL;
        CHECK_RC(cdm_store_insert(store, "Note", &note), CDM_OK);
        CHECK_RC(cdm_object_set_text(note, "title", titles[i], CDM_NUL_TERMINATED), CDM_OK);
        CHECK_RC(cdm_object_set_text(note, "body", "b", CDM_NUL_TERMINATED), CDM_OK);
    }
    int rc = cdm_store_save(store);
    cdm_store_close(store);
    return rc == CDM_OK;
}

static cdm_model *model(const char *identifier) {
    char json[512];
    snprintf(json, sizeof json, MODEL_FORMAT, identifier);
    cdm_model *m = NULL;
    CHECK_RC(cdm_model_from_json(json, &m), CDM_OK);
    return m;
}

int main(void) {
    if (!scratch_begin("policy-view")) return 2;
    cdm_model *src = model("1"), *dst = model("2");
    const char *text = "unset";
    CHECK_RC(cdm_model_version_identifier(NULL, &text), CDM_MISUSE);
    cdm_model *plain = NULL;
    CHECK_RC(cdm_model_from_json("{\"entities\": [{\"name\": \"Note\"}]}", &plain), CDM_OK);
    CHECK_RC(cdm_model_version_identifier(plain, &text), CDM_OK);
    CHECK(text == NULL);
    cdm_model_free(plain);

    static char source[512];
    snprintf(source, sizeof source, "%s", path_in_dir("v1.sqlite"));
    if (make_source(src, source)) {
        cdm_mapping *mapping = NULL;
        CHECK_RC(cdm_mapping_from_json(MAPPING, &mapping), CDM_OK);
        cdm_migration *migration = NULL;
        CHECK_RC(cdm_migration_new(src, dst, &mapping, 1, &migration), CDM_OK);
        view_state state;
        memset(&state, 0, sizeof state);
        cdm_policy policy;
        memset(&policy, 0, sizeof policy);
        policy.begin = begin;
        policy.end = end;
        CHECK_RC(cdm_migration_register_policy(migration, "NotePolicy", &policy, sizeof policy, &state, NULL), CDM_OK);

        /* First run: begin changes the title's (and the body's) expression; every instance takes it. */
        state.rewrite = 1;
        CHECK_RC(cdm_migration_run(migration, source, path_in_dir("first.sqlite")), CDM_OK);
        CHECK_STR(state.expression_seen, "$source.title");
        CHECK_STR(state.expression_set, "FUNCTION($source.title, \"uppercaseString\")");
        CHECK_STR(state.titles, "ALPHA/-,BETA/-,GAMMA/-");

        /* Second run of the same migration: the declared expressions again. */
        state.rewrite = 0;
        CHECK_RC(cdm_migration_run(migration, source, path_in_dir("second.sqlite")), CDM_OK);
        CHECK_STR(state.expression_seen, "$source.title");
        CHECK_STR(state.expression_set, "$source.title");
        CHECK_STR(state.titles, "alpha/b,beta/b,gamma/b");

        /* The mapping the migration was made with is unchanged. */
        char *json = NULL;
        CHECK_RC(cdm_mapping_json(mapping, &json), CDM_OK);
        CHECK(json && !strstr(json, "uppercaseString"));
        cdm_free(json);
        cdm_mapping_free(mapping);
        cdm_migration_free(migration);
    } else {
        failed++;
        fprintf(stderr, "FAIL: could not make the source store\n");
    }
    cdm_model_free(src);
    cdm_model_free(dst);
    return scratch_end("");
}
