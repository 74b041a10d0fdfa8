/* C tests of policy methods (FUNCTION($entityPolicy, "selector:", …) answered by
** cdm_migration_register_policy_method; $manager arguments and collection results) and of sorted fetches with format specifiers
** (cdm_context_fetch). Prints "N passed, M failed" last; exits non-zero on any failure. */
#define _GNU_SOURCE  /* memmem */
#include <cdmigrate.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "scratch.h"
#include "cdmigrate_internal.h"

static const char *SOURCE_MODEL =
    "{\"name\": \"V1\", \"entities\": [{\"name\": \"Person\", \"attributes\": ["
    " {\"name\": \"name\", \"type\": \"string\"}, {\"name\": \"age\", \"type\": \"integer64\"}],"
    " \"relationships\": [{\"name\": \"friend\", \"destination\": \"Person\"}]}]}";
static const char *DESTINATION_MODEL =
    "{\"name\": \"V2\", \"entities\": [{\"name\": \"Copy\", \"attributes\": ["
    " {\"name\": \"name\", \"type\": \"string\"}, {\"name\": \"label\", \"type\": \"string\"}, {\"name\": \"age\", \"type\": \"integer64\"}]}]}";
/* %s: the label's value expression. */
static const char *MAPPING_FORMAT =
    "{\"entityMappings\": [{\"name\": \"PersonToCopy\", \"sourceEntity\": \"Person\", \"destinationEntity\": \"Copy\","
    " \"predicate\": \"TRUEPREDICATE\", \"policy\": \"CopyPolicy\", \"attributeMappings\": {\"name\": \"$source.name\", \"age\": \"$source.age\", \"label\": \"%s\"}}]}";

/* Rows in Z_PK order, chosen so that primary-key and case-sensitive orders differ. */
static const char *NAMES[] = {"bob", "Anna", NULL, "Cecil", "anna"};
static const int AGES[] = {30, 30, 20, 40, 10};

static int make_source(cdm_model *model, const char *path) {
    cdm_store *store = NULL;
    CHECK_RC(cdm_store_create(model, path, &store), CDM_OK);
    for (int i = 0; i < 5; i++) {
        cdm_object *person = NULL;
        CHECK_RC(cdm_store_insert(store, "Person", &person), CDM_OK);
        if (NAMES[i]) CHECK_RC(cdm_object_set_text(person, "name", NAMES[i], CDM_NUL_TERMINATED), CDM_OK);
        CHECK_RC(cdm_object_set_int64(person, "age", AGES[i]), CDM_OK);
    }
    int rc = cdm_store_save(store);
    cdm_store_close(store);
    return rc == CDM_OK;
}

/* The names of a list, "nil" for null, joined by ","; into buf. */
static const char *names(cdm_list *list, char *buf, size_t size) {
    buf[0] = 0;
    cdm_object *const *objects = NULL;
    size_t count = 0;
    if (cdm_list_objects(list, &objects, &count) != CDM_OK) return "(error)";
    for (size_t i = 0; i < count; i++) {
        const char *text = NULL; int is_null = 0;
        if (cdm_object_get_text(objects[i], "name", &text, NULL, &is_null) != CDM_OK) return "(error)";
        if (i) strncat(buf, ",", size - strlen(buf) - 1);
        strncat(buf, is_null ? "nil" : text, size - strlen(buf) - 1);
    }
    return buf;
}

/* --- Policy methods ------------------------------------------------------------------------- */

typedef struct { int calls; int destroyed; int fallback_calls; char last_selector[64]; } method_state;

/* labelFor:age: — "<name>/<age>", null for a null name. */
static int label_for_age(cdm_context *ctx, const char *selector, int argc, cdm_value *const *argv, cdm_value *result, void *user) {
    method_state *s = user;
    s->calls++;
    snprintf(s->last_selector, sizeof s->last_selector, "%s", selector);
    if (argc != 2) return cdm_context_fail(ctx, CDM_EXPRESSION_EVALUATION, "labelFor:age: takes two arguments");
    if (cdm_value_type(argv[0]) == CDM_VALUE_NULL) return cdm_value_set_null(result);
    const char *text = NULL; size_t length = 0; int64_t age = 0;
    int rc = cdm_value_text(argv[0], &text, &length);
    if (rc) return rc;
    rc = cdm_value_int64(argv[1], &age);
    if (rc) return rc;
    char buf[128];
    snprintf(buf, sizeof buf, "%.*s/%lld", (int)length, text, (long long)age);
    return cdm_value_set_text(result, buf, CDM_NUL_TERMINATED);
}

/* Every other selector: answers "!" to "shout"; the others are not answered (CDM_NOTFOUND). */
static int fallback(cdm_context *ctx, const char *selector, int argc, cdm_value *const *argv, cdm_value *result, void *user) {
    (void)ctx; (void)argc; (void)argv;
    method_state *s = user;
    s->fallback_calls++;
    snprintf(s->last_selector, sizeof s->last_selector, "%s", selector);
    if (strcmp(selector, "shout") == 0) return cdm_value_set_text(result, "!", CDM_NUL_TERMINATED);
    return CDM_NOTFOUND;
}

static void method_destroy(void *user) { ((method_state *)user)->destroyed++; }

static cdm_migration *make_migration(cdm_model *src, cdm_model *dst, const char *label_expression, const cdm_policy *policy, void *policy_user) {
    char json[2048];
    snprintf(json, sizeof json, MAPPING_FORMAT, label_expression);
    cdm_mapping *mapping = NULL;
    CHECK_RC(cdm_mapping_from_json(json, &mapping), CDM_OK);
    cdm_migration *migration = NULL;
    CHECK_RC(cdm_migration_new(src, dst, &mapping, 1, &migration), CDM_OK);
    cdm_mapping_free(mapping);
    cdm_policy empty;
    memset(&empty, 0, sizeof empty);
    CHECK_RC(cdm_migration_register_policy(migration, "CopyPolicy", policy ? policy : &empty, sizeof(cdm_policy), policy_user, NULL), CDM_OK);
    return migration;
}

static void test_policy_methods(cdm_model *src, cdm_model *dst, const char *source) {
    method_state state = {0, 0, 0, ""};
    cdm_migration *migration = make_migration(src, dst, "FUNCTION($entityPolicy, \\\"labelFor:age:\\\", $source.name, $source.age)", NULL, NULL);
    CHECK_RC(cdm_migration_register_policy_method(migration, "CopyPolicy", "labelFor:age:", label_for_age, &state, method_destroy), CDM_OK);
    /* Misuse: NULL function, empty selector, NULL policy name; each destroys the user at once. */
    method_state misuse = {0, 0, 0, ""};
    CHECK_RC(cdm_migration_register_policy_method(migration, "CopyPolicy", "x:", NULL, &misuse, method_destroy), CDM_MISUSE);
    CHECK_RC(cdm_migration_register_policy_method(migration, "CopyPolicy", "", label_for_age, &misuse, method_destroy), CDM_INVALID_ARGUMENT);
    CHECK_RC(cdm_migration_register_policy_method(migration, NULL, "x:", label_for_age, &misuse, method_destroy), CDM_MISUSE);
    CHECK_RC(cdm_migration_register_policy_method(NULL, "CopyPolicy", "x:", label_for_age, &misuse, method_destroy), CDM_MISUSE);
    CHECK(misuse.destroyed == 4);
    CHECK_RC(cdm_migration_run(migration, source, path_in_dir("methods.sqlite")), CDM_OK);
    CHECK(state.calls == 5);
    CHECK_STR(state.last_selector, "labelFor:age:");
    CHECK(state.destroyed == 0);
    cdm_migration_free(migration);
    CHECK(state.destroyed == 1);
}

static const char *first_label;
static int read_label(cdm_context *ctx, void *user) {
    (void)user;
    cdm_list *list = NULL;
    cdm_sort_descriptor by_name = {"name", 1};
    CHECK_RC(cdm_context_fetch(ctx, CDM_STORE_DESTINATION, "Copy", "name != nil", NULL, 0, &by_name, 1, 0, 1, &list), CDM_OK);
    cdm_object *first = NULL;
    CHECK_RC(cdm_list_object_at(list, 0, &first), CDM_OK);
    const char *text = NULL;
    CHECK_RC(cdm_object_get_text(first, "label", &text, NULL, NULL), CDM_OK);
    static char kept[64];
    snprintf(kept, sizeof kept, "%s", text ? text : "(null)");
    first_label = kept;
    return CDM_OK;
}

static void test_policy_method_results_and_unknown_selectors(cdm_model *src, cdm_model *dst, const char *source) {
    /* The result is what the destination gets; read back in a hook through a sorted fetch. */
    method_state state = {0, 0, 0, ""};
    cdm_policy hooks;
    memset(&hooks, 0, sizeof hooks);
    hooks.end_instance_creation = read_label;
    cdm_migration *migration = make_migration(src, dst, "FUNCTION($entityPolicy, \\\"labelFor:age:\\\", $source.name, $source.age)", &hooks, NULL);
    CHECK_RC(cdm_migration_register_policy_method(migration, "CopyPolicy", "labelFor:age:", label_for_age, &state, method_destroy), CDM_OK);
    CHECK_RC(cdm_migration_run(migration, source, path_in_dir("labels.sqlite")), CDM_OK);
    CHECK_STR(first_label, "Anna/30");
    cdm_migration_free(migration);

    /* A selector nothing answers: the policy class and the selector are named. */
    migration = make_migration(src, dst, "FUNCTION($entityPolicy, \\\"nope:\\\", $source.name)", NULL, NULL);
    CHECK_RC(cdm_migration_register_policy_method(migration, "CopyPolicy", "labelFor:age:", label_for_age, &state, method_destroy), CDM_OK);
    CHECK_RC(cdm_migration_run(migration, source, path_in_dir("unknown.sqlite")), CDM_EXPRESSION_EVALUATION);
    CHECK_HAS(cdm_migration_errmsg(migration), "CopyPolicy");
    CHECK_HAS(cdm_migration_errmsg(migration), "'nope:'");
    CHECK(access(path_in_dir("unknown.sqlite"), F_OK) != 0);

    /* A method for every selector gets the selector; CDM_NOTFOUND means "no such method". */
    method_state any = {0, 0, 0, ""};
    CHECK_RC(cdm_migration_register_policy_method(migration, "CopyPolicy", NULL, fallback, &any, method_destroy), CDM_OK);
    CHECK_RC(cdm_migration_run(migration, source, path_in_dir("fallback.sqlite")), CDM_EXPRESSION_EVALUATION);
    CHECK(any.fallback_calls == 1);
    CHECK_STR(any.last_selector, "nope:");
    CHECK_HAS(cdm_migration_errmsg(migration), "has no method for the selector 'nope:'");
    cdm_migration_free(migration);
    CHECK(any.destroyed == 1);

    migration = make_migration(src, dst, "FUNCTION($entityPolicy, \\\"shout\\\")", NULL, NULL);
    method_state shout = {0, 0, 0, ""};
    CHECK_RC(cdm_migration_register_policy_method(migration, "CopyPolicy", NULL, fallback, &shout, method_destroy), CDM_OK);
    CHECK_RC(cdm_migration_run(migration, source, path_in_dir("shout.sqlite")), CDM_OK);
    CHECK(shout.fallback_calls == 5);
    CHECK_STR(shout.last_selector, "shout");
    cdm_migration_free(migration);
    CHECK(state.destroyed == 2);
}

/* --- Sorted fetches and format specifiers ------------------------------------------------- */

static int fetch_checks(cdm_context *ctx, void *user) {
    (void)user;
    char buf[256];
    cdm_list *list = NULL;
    /* Z_PK order without descriptors, in both fetches. */
    CHECK_RC(cdm_context_fetch(ctx, CDM_STORE_SOURCE, "Person", NULL, NULL, 0, NULL, 0, 0, 0, &list), CDM_OK);
    CHECK_STR(names(list, buf, sizeof buf), "bob,Anna,nil,Cecil,anna");
    CHECK_RC(cdm_context_fetch_source(ctx, "Person", NULL, NULL, 0, 0, 0, &list), CDM_OK);
    CHECK_STR(names(list, buf, sizeof buf), "bob,Anna,nil,Cecil,anna");
    /* Case-sensitive, null first; descending; two keys with Z_PK breaking ties. */
    cdm_sort_descriptor by_name[] = {{"name", 1}};
    CHECK_RC(cdm_context_fetch(ctx, CDM_STORE_SOURCE, "Person", NULL, NULL, 0, by_name, 1, 0, 0, &list), CDM_OK);
    CHECK_STR(names(list, buf, sizeof buf), "nil,Anna,Cecil,anna,bob");
    cdm_sort_descriptor by_name_down[] = {{"name", 0}};
    CHECK_RC(cdm_context_fetch(ctx, CDM_STORE_SOURCE, "Person", NULL, NULL, 0, by_name_down, 1, 0, 0, &list), CDM_OK);
    CHECK_STR(names(list, buf, sizeof buf), "bob,anna,Cecil,Anna,nil");
    cdm_sort_descriptor by_age_down[] = {{"age", 0}};
    CHECK_RC(cdm_context_fetch(ctx, CDM_STORE_SOURCE, "Person", NULL, NULL, 0, by_age_down, 1, 0, 0, &list), CDM_OK);
    CHECK_STR(names(list, buf, sizeof buf), "Cecil,bob,Anna,nil,anna");
    /* The destination, instances not yet written included, with a limit. */
    cdm_sort_descriptor by_age_name[] = {{"age", 1}, {"name", 1}};
    CHECK_RC(cdm_context_fetch(ctx, CDM_STORE_DESTINATION, "Copy", NULL, NULL, 0, by_age_name, 2, 0, 3, &list), CDM_OK);
    CHECK_STR(names(list, buf, sizeof buf), "anna,nil,Anna");

    /* %K, %d, %i, %f substitute as %@ does. */
    cdm_field args[] = {cdm_field_text(NULL, "age"), cdm_field_int64(NULL, 25), cdm_field_double(NULL, 35.5)};
    CHECK_RC(cdm_context_fetch(ctx, CDM_STORE_SOURCE, "Person", "%K > %d AND age < %f", args, 3, by_name, 1, 0, 0, &list), CDM_OK);
    CHECK_STR(names(list, buf, sizeof buf), "Anna,bob");
    size_t count = 0;
    cdm_field thirty[] = {cdm_field_int64(NULL, 30)};
    CHECK_RC(cdm_context_count_source(ctx, "Person", "age == %i", thirty, 1, 0, &count), CDM_OK);
    CHECK(count == 2);
    cdm_field key_and_prefix[] = {cdm_field_text(NULL, "name"), cdm_field_text(NULL, "a")};
    CHECK_RC(cdm_context_fetch_destination(ctx, "Copy", "%K BEGINSWITH %@", key_and_prefix, 2, 0, 0, &list), CDM_OK);
    CHECK_STR(names(list, buf, sizeof buf), "anna");

    /* Argument errors name the position. */
    CHECK_RC(cdm_context_fetch(ctx, CDM_STORE_SOURCE, "Person", "%K > %d", args, 1, NULL, 0, 0, 0, &list), CDM_EXPRESSION_SYNTAX);
    CHECK_HAS(cdm_context_errmsg(ctx), "format argument 2 for '%d' (only 1 given)");
    CHECK(cdm_error_offset(cdm_context_error(ctx)) == 5);
    cdm_field wrong[] = {cdm_field_text(NULL, "age"), cdm_field_text(NULL, "old")};
    CHECK_RC(cdm_context_fetch(ctx, CDM_STORE_SOURCE, "Person", "%K > %d", wrong, 2, NULL, 0, 0, 0, &list), CDM_EXPRESSION_SYNTAX);
    CHECK_HAS(cdm_context_errmsg(ctx), "a number as format argument 2 for '%d', not string 'old'");
    CHECK_RC(cdm_context_fetch_source(ctx, "Person", "name == %@", key_and_prefix, 2, 0, 0, &list), CDM_EXPRESSION_SYNTAX);
    CHECK_HAS(cdm_context_errmsg(ctx), "format argument 2 of 2 is left over");
    CHECK_RC(cdm_context_fetch(ctx, CDM_STORE_SOURCE, "Person", "%K == 1", thirty, 1, NULL, 0, 0, 0, &list), CDM_EXPRESSION_SYNTAX);
    CHECK_HAS(cdm_context_errmsg(ctx), "a key path string as format argument 1 for '%K'");

    /* Bad sort descriptors and stores. */
    cdm_sort_descriptor bad[] = {{"age", 1}, {"nmae", 1}};
    CHECK_RC(cdm_context_fetch(ctx, CDM_STORE_SOURCE, "Person", NULL, NULL, 0, bad, 2, 0, 0, &list), CDM_INVALID_ARGUMENT);
    CHECK_HAS(cdm_context_errmsg(ctx), "sort descriptor 2 ('nmae')");
    CHECK_HAS(cdm_context_errmsg(ctx), "did you mean 'name'");
    cdm_sort_descriptor relationship[] = {{"friend", 1}};
    CHECK_RC(cdm_context_fetch(ctx, CDM_STORE_SOURCE, "Person", NULL, NULL, 0, relationship, 1, 0, 0, &list), CDM_INVALID_ARGUMENT);
    CHECK_HAS(cdm_context_errmsg(ctx), "is a relationship");
    cdm_sort_descriptor null_key[] = {{NULL, 1}};
    CHECK_RC(cdm_context_fetch(ctx, CDM_STORE_SOURCE, "Person", NULL, NULL, 0, null_key, 1, 0, 0, &list), CDM_MISUSE);
    CHECK_HAS(cdm_context_errmsg(ctx), "sort descriptor 1");
    CHECK_RC(cdm_context_fetch(ctx, CDM_STORE_SOURCE, "Person", NULL, NULL, 0, NULL, 2, 0, 0, &list), CDM_MISUSE);
    CHECK_RC(cdm_context_fetch(ctx, 7, "Person", NULL, NULL, 0, NULL, 0, 0, 0, &list), CDM_INVALID_ARGUMENT);
    CHECK_RC(cdm_context_fetch(ctx, CDM_STORE_DESTINATION, "Person", NULL, NULL, 0, NULL, 0, 0, 0, &list), CDM_NOTFOUND);
    CHECK_RC(cdm_context_fetch(ctx, CDM_STORE_SOURCE, "Person", NULL, NULL, 0, NULL, 0, 0, 0, NULL), CDM_MISUSE);
    return CDM_OK;
}

static void test_sorted_fetches(cdm_model *src, cdm_model *dst, const char *source) {
    CHECK(cdm_internal_struct_size("cdm_sort_descriptor") == sizeof(cdm_sort_descriptor));
    cdm_policy hooks;
    memset(&hooks, 0, sizeof hooks);
    hooks.end_instance_creation = fetch_checks;
    cdm_migration *migration = make_migration(src, dst, "$source.name", &hooks, NULL);
    CHECK_RC(cdm_migration_run(migration, source, path_in_dir("sorted.sqlite")), CDM_OK);
    cdm_migration_free(migration);
    /* Outside a callback the context is stale. */
    cdm_list *list = NULL;
    CHECK_RC(cdm_context_fetch(NULL, CDM_STORE_SOURCE, "Person", NULL, NULL, 0, NULL, 0, 0, 0, &list), CDM_MISUSE);
}

/* --- Relationship mappings answered by policy methods: $manager and collection results ------- */

static const char *TREE_MODEL =
    "{\"name\": \"Tree\", \"entities\": [{\"name\": \"Folder\", \"attributes\": [{\"name\": \"name\", \"type\": \"string\"}],"
    " \"relationships\": [{\"name\": \"children\", \"destination\": \"Folder\", \"inverse\": \"parent\", \"toMany\": true, \"ordered\": true},"
    " {\"name\": \"parent\", \"destination\": \"Folder\", \"inverse\": \"children\"},"
    " {\"name\": \"related\", \"destination\": \"Folder\", \"toMany\": true}, {\"name\": \"best\", \"destination\": \"Folder\"}]}]}";
static const char *TREE_MAPPING =
    "{\"entityMappings\": [{\"name\": \"FolderToFolder\", \"sourceEntity\": \"Folder\", \"destinationEntity\": \"Folder\","
    " \"predicate\": \"TRUEPREDICATE\", \"policy\": \"TreePolicy\", \"attributeMappings\": {\"name\": \"$source.name\"},"
    " \"relationshipMappings\": {"
    "  \"children\": \"FUNCTION($entityPolicy, \\\"childrenFor:manager:\\\", $source.children, $manager)\","
    "  \"related\": \"FUNCTION($entityPolicy, \\\"nothingFor:manager:\\\", $source.related, $manager)\","
    "  \"best\": \"FUNCTION($entityPolicy, \\\"firstOf:manager:\\\", $source.children, $manager)\"}}]}";

typedef struct { int manager_arguments; int refusals; char root_children[64]; char root_best[16]; size_t root_related; } tree_state;

/* The destination instances made from the collection argument `argv[0]`. */
static int destinations_of(cdm_context *ctx, cdm_value *collection, cdm_object *const **out, size_t *count) {
    size_t n = 0;
    int rc = cdm_value_count(collection, &n);
    if (rc) return rc;
    cdm_object *sources[16];
    if (n > 16) return cdm_context_fail(ctx, CDM_EXPRESSION_EVALUATION, "too many children for this test");
    for (size_t i = 0; i < n; i++) {
        cdm_value *element = NULL;
        if ((rc = cdm_value_element_at(collection, i, &element)) != CDM_OK) return rc;
        if ((rc = cdm_value_object(element, &sources[i])) != CDM_OK) return rc;
    }
    return cdm_context_destination_instances(ctx, "FolderToFolder", sources, n, out, count);
}

/* childrenFor:manager: the children in reverse order; nothingFor:manager: an empty collection;
** firstOf:manager: the first child, or none. Each checks that $manager came as CDM_VALUE_MANAGER. */
static int tree_method(cdm_context *ctx, const char *selector, int argc, cdm_value *const *argv, cdm_value *result, void *user) {
    tree_state *s = user;
    if (argc != 2 || cdm_value_type(argv[1]) != CDM_VALUE_MANAGER)
        return cdm_context_fail(ctx, CDM_EXPRESSION_EVALUATION, "the second argument is not the manager");
    s->manager_arguments++;
    /* Arguments are read-only; appending needs a collection first. */
    if (cdm_value_set_collection(argv[0]) == CDM_MISUSE) s->refusals++;
    if (cdm_value_append_object(result, NULL) == CDM_MISMATCH) s->refusals++;
    cdm_object *const *found = NULL;
    size_t count = 0;
    int rc = destinations_of(ctx, argv[0], &found, &count);
    if (rc) return rc;
    if (strcmp(selector, "childrenFor:manager:") == 0) {
        if ((rc = cdm_value_set_collection(result)) != CDM_OK) return rc;
        for (size_t i = count; i > 0; i--)
            if ((rc = cdm_value_append_object(result, found[i - 1])) != CDM_OK) return rc;
        return CDM_OK;
    }
    if (strcmp(selector, "nothingFor:manager:") == 0) return cdm_value_set_collection(result);
    if (strcmp(selector, "firstOf:manager:") == 0) return count ? cdm_value_set_object(result, found[0]) : cdm_value_set_null(result);
    return CDM_NOTFOUND;
}

/* After relationship creation: the root's children, best and related, as the destination has them. */
static int read_tree(cdm_context *ctx, void *user) {
    tree_state *s = user;
    cdm_list *list = NULL;
    int rc = cdm_context_fetch(ctx, CDM_STORE_DESTINATION, "Folder", "name == 'root'", NULL, 0, NULL, 0, 0, 1, &list);
    if (rc) return rc;
    cdm_object *root = NULL;
    if ((rc = cdm_list_object_at(list, 0, &root)) != CDM_OK) return rc;
    cdm_object *const *children = NULL;
    size_t count = 0;
    if ((rc = cdm_object_get_objects(root, "children", &children, &count)) != CDM_OK) return rc;
    s->root_children[0] = 0;
    for (size_t i = 0; i < count; i++) {
        const char *text = NULL;
        if ((rc = cdm_object_get_text(children[i], "name", &text, NULL, NULL)) != CDM_OK) return rc;
        strncat(s->root_children, text ? text : "?", sizeof s->root_children - strlen(s->root_children) - 1);
    }
    cdm_object *best = NULL;
    if ((rc = cdm_object_get_object(root, "best", &best)) != CDM_OK) return rc;
    const char *text = NULL;
    if (best && (rc = cdm_object_get_text(best, "name", &text, NULL, NULL)) != CDM_OK) return rc;
    snprintf(s->root_best, sizeof s->root_best, "%s", text ? text : "nil");
    cdm_object *const *related = NULL;
    if ((rc = cdm_object_get_objects(root, "related", &related, &s->root_related)) != CDM_OK) return rc;
    return CDM_OK;
}

static void test_relationship_results_and_manager_arguments(void) {
    cdm_model *tree = NULL;
    CHECK_RC(cdm_model_from_json(TREE_MODEL, &tree), CDM_OK);
    const char *path = path_in_dir("tree.sqlite");
    static char source[512];
    snprintf(source, sizeof source, "%s", path);
    cdm_store *store = NULL;
    CHECK_RC(cdm_store_create(tree, source, &store), CDM_OK);
    cdm_object *root = NULL;
    CHECK_RC(cdm_store_insert(store, "Folder", &root), CDM_OK);
    CHECK_RC(cdm_object_set_text(root, "name", "root", CDM_NUL_TERMINATED), CDM_OK);
    const char *kids[] = {"a", "b", "c"};
    for (int i = 0; i < 3; i++) {
        cdm_object *kid = NULL;
        CHECK_RC(cdm_store_insert(store, "Folder", &kid), CDM_OK);
        CHECK_RC(cdm_object_set_text(kid, "name", kids[i], CDM_NUL_TERMINATED), CDM_OK);
        CHECK_RC(cdm_object_add_object(root, "children", kid), CDM_OK);
        if (i == 0) CHECK_RC(cdm_object_add_object(root, "related", kid), CDM_OK);
    }
    CHECK_RC(cdm_store_save(store), CDM_OK);
    cdm_store_close(store);

    cdm_mapping *mapping = NULL;
    CHECK_RC(cdm_mapping_from_json(TREE_MAPPING, &mapping), CDM_OK);
    cdm_migration *migration = NULL;
    CHECK_RC(cdm_migration_new(tree, tree, &mapping, 1, &migration), CDM_OK);
    cdm_mapping_free(mapping);
    tree_state state;
    memset(&state, 0, sizeof state);
    cdm_policy hooks;
    memset(&hooks, 0, sizeof hooks);
    hooks.end_relationship_creation = read_tree;
    CHECK_RC(cdm_migration_register_policy(migration, "TreePolicy", &hooks, sizeof hooks, &state, NULL), CDM_OK);
    CHECK_RC(cdm_migration_register_policy_method(migration, "TreePolicy", NULL, tree_method, &state, NULL), CDM_OK);
    CHECK_RC(cdm_migration_run(migration, source, path_in_dir("tree-out.sqlite")), CDM_OK);
    cdm_migration_free(migration);
    cdm_model_free(tree);
    CHECK(state.manager_arguments == 12);   /* three methods, four folders */
    CHECK(state.refusals == 24);
    CHECK_STR(state.root_children, "cba");  /* the order appended */
    CHECK_STR(state.root_best, "a");        /* one instance */
    CHECK(state.root_related == 0);         /* an empty collection */
}

/* Plain values in a collection result: a policy method returning an array of a URL, a number and a
** nested array for a transformable attribute, which keeps its NSKeyedArchiver archive. */
static const char *APPS_MODEL =
    "{\"name\": \"Apps\", \"entities\": [{\"name\": \"App\", \"attributes\": ["
    " {\"name\": \"name\", \"type\": \"string\"}, {\"name\": \"shots\", \"type\": \"transformable\", \"optional\": true}]}]}";
static const char *APPS_MAPPING =
    "{\"entityMappings\": [{\"name\": \"AppToApp\", \"sourceEntity\": \"App\", \"destinationEntity\": \"App\","
    " \"predicate\": \"TRUEPREDICATE\", \"policy\": \"AppPolicy\", \"attributeMappings\": {\"name\": \"$source.name\","
    " \"shots\": \"FUNCTION($entityPolicy, 'shotsFor:', $source.name)\"}}]}";

static int shots_for(cdm_context *ctx, const char *selector, int argc, cdm_value *const *argv, cdm_value *result, void *user) {
    (void)ctx; (void)selector; (void)argc; (void)argv;
    int *refusals = user;
    cdm_value *element = NULL, *inner = NULL, *deepest = NULL;
    if (cdm_value_append_new(result, &element) == CDM_MISMATCH && element == NULL) (*refusals)++;  /* no collection yet */
    if (cdm_value_append_new(argv[0], &element) == CDM_MISUSE) (*refusals)++;                      /* an argument */
    int rc;
    if ((rc = cdm_value_set_collection(result)) != CDM_OK) return rc;
    if ((rc = cdm_value_append_new(result, &element)) != CDM_OK) return rc;
    if ((rc = cdm_value_set_text(element, "https://example.org/1.png", CDM_NUL_TERMINATED)) != CDM_OK) return rc;
    if ((rc = cdm_value_append_new(result, &element)) != CDM_OK) return rc;
    if ((rc = cdm_value_set_int64(element, 3)) != CDM_OK) return rc;
    if ((rc = cdm_value_append_new(result, &inner)) != CDM_OK) return rc;
    if ((rc = cdm_value_set_collection(inner)) != CDM_OK) return rc;
    if ((rc = cdm_value_append_new(inner, &deepest)) != CDM_OK) return rc;
    return cdm_value_set_text(deepest, "nested-shot", CDM_NUL_TERMINATED);
}

static void test_plain_values_in_a_collection_result(void) {
    cdm_model *apps = NULL;
    CHECK_RC(cdm_model_from_json(APPS_MODEL, &apps), CDM_OK);
    static char source[512];
    snprintf(source, sizeof source, "%s", path_in_dir("apps.sqlite"));
    cdm_store *store = NULL;
    CHECK_RC(cdm_store_create(apps, source, &store), CDM_OK);
    cdm_object *app = NULL;
    CHECK_RC(cdm_store_insert(store, "App", &app), CDM_OK);
    CHECK_RC(cdm_object_set_text(app, "name", "alpha", CDM_NUL_TERMINATED), CDM_OK);
    CHECK_RC(cdm_store_save(store), CDM_OK);
    cdm_store_close(store);
    cdm_mapping *mapping = NULL;
    CHECK_RC(cdm_mapping_from_json(APPS_MAPPING, &mapping), CDM_OK);
    cdm_migration *migration = NULL;
    CHECK_RC(cdm_migration_new(apps, apps, &mapping, 1, &migration), CDM_OK);
    cdm_mapping_free(mapping);
    int refusals = 0;
    cdm_policy hooks;
    memset(&hooks, 0, sizeof hooks);
    CHECK_RC(cdm_migration_register_policy(migration, "AppPolicy", &hooks, sizeof hooks, NULL, NULL), CDM_OK);
    CHECK_RC(cdm_migration_register_policy_method(migration, "AppPolicy", "shotsFor:", shots_for, &refusals, NULL), CDM_OK);
    static char out[512];
    snprintf(out, sizeof out, "%s", path_in_dir("apps-out.sqlite"));
    CHECK_RC(cdm_migration_run(migration, source, out), CDM_OK);
    cdm_migration_free(migration);
    CHECK(refusals == 2);
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    CHECK(sqlite3_open_v2(out, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    CHECK(sqlite3_prepare_v2(db, "SELECT ZSHOTS FROM ZAPP", -1, &st, NULL) == SQLITE_OK);
    CHECK(sqlite3_step(st) == SQLITE_ROW);
    const void *bytes = sqlite3_column_blob(st, 0);
    size_t length = (size_t)sqlite3_column_bytes(st, 0);
    CHECK(bytes != NULL && length > 8 && memcmp(bytes, "bplist00", 8) == 0);   /* a keyed archive */
    CHECK(bytes != NULL && memmem(bytes, length, "nested-shot", 11) != NULL);
    CHECK(bytes != NULL && memmem(bytes, length, "NSKeyedArchiver", 15) != NULL);
    sqlite3_finalize(st);
    sqlite3_close(db);
    cdm_model_free(apps);
}

/* Reading a transformable attribute: cdm_object_get_value gives the object its keyed archive holds
** (the array the previous test stored), cdm_object_get_blob the stored bytes. */
typedef struct { int collections, first_text_ok, blobs_ok; } shots_read;

static int read_shots(cdm_context *ctx, cdm_object *source, void *user) {
    shots_read *seen = user;
    cdm_value *value = NULL, *first = NULL;
    size_t count = 0, length = 0;
    const char *text = NULL;
    const void *bytes = NULL;
    int is_null = 1;
    if (cdm_object_get_value(source, "shots", &value) == CDM_OK && cdm_value_type(value) == CDM_VALUE_COLLECTION
        && cdm_value_count(value, &count) == CDM_OK && count == 3) {
        seen->collections++;
        if (cdm_value_element_at(value, 0, &first) == CDM_OK && cdm_value_text(first, &text, &length) == CDM_OK
            && length == 25 && memcmp(text, "https://example.org/1.png", 25) == 0) seen->first_text_ok++;
    }
    if (cdm_object_get_blob(source, "shots", &bytes, &length, &is_null) == CDM_OK && !is_null && length > 8
        && memcmp(bytes, "bplist00", 8) == 0) seen->blobs_ok++;
    cdm_object *destination = NULL;
    int rc = cdm_context_create_instance(ctx, "App", &destination);
    if (rc == CDM_OK) rc = cdm_context_apply_attribute_mappings(ctx, source, destination);
    if (rc == CDM_OK) rc = cdm_context_associate(ctx, source, destination);
    return rc;
}

static void test_reading_a_transformable_attribute(void) {
    static const char *COPY =
        "{\"entityMappings\": [{\"name\": \"AppToApp\", \"sourceEntity\": \"App\", \"destinationEntity\": \"App\","
        " \"predicate\": \"TRUEPREDICATE\", \"policy\": \"ReadingPolicy\","
        " \"attributeMappings\": {\"name\": \"$source.name\", \"shots\": \"$source.shots\"}}]}";
    cdm_model *apps = NULL;
    CHECK_RC(cdm_model_from_json(APPS_MODEL, &apps), CDM_OK);
    cdm_mapping *mapping = NULL;
    CHECK_RC(cdm_mapping_from_json(COPY, &mapping), CDM_OK);
    cdm_migration *migration = NULL;
    CHECK_RC(cdm_migration_new(apps, apps, &mapping, 1, &migration), CDM_OK);
    cdm_mapping_free(mapping);
    shots_read seen = {0, 0, 0};
    cdm_policy hooks;
    memset(&hooks, 0, sizeof hooks);
    hooks.create_destination_instances = read_shots;
    CHECK_RC(cdm_migration_register_policy(migration, "ReadingPolicy", &hooks, sizeof hooks, &seen, NULL), CDM_OK);
    static char source[512], out[512];
    snprintf(source, sizeof source, "%s", path_in_dir("apps-out.sqlite"));
    snprintf(out, sizeof out, "%s", path_in_dir("apps-read.sqlite"));
    CHECK_RC(cdm_migration_run(migration, source, out), CDM_OK);
    cdm_migration_free(migration);
    CHECK(seen.collections == 1);
    CHECK(seen.first_text_ok == 1);
    CHECK(seen.blobs_ok == 1);
    /* The copy ($source.shots into the same transformable attribute) keeps the bytes. */
    sqlite3 *a = NULL, *b = NULL;
    sqlite3_stmt *sa = NULL, *sb = NULL;
    CHECK(sqlite3_open_v2(source, &a, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    CHECK(sqlite3_open_v2(out, &b, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    CHECK(sqlite3_prepare_v2(a, "SELECT ZSHOTS FROM ZAPP", -1, &sa, NULL) == SQLITE_OK);
    CHECK(sqlite3_prepare_v2(b, "SELECT ZSHOTS FROM ZAPP", -1, &sb, NULL) == SQLITE_OK);
    CHECK(sqlite3_step(sa) == SQLITE_ROW && sqlite3_step(sb) == SQLITE_ROW);
    CHECK(sqlite3_column_bytes(sa, 0) == sqlite3_column_bytes(sb, 0));
    CHECK(sqlite3_column_bytes(sa, 0) > 0
          && memcmp(sqlite3_column_blob(sa, 0), sqlite3_column_blob(sb, 0), (size_t)sqlite3_column_bytes(sa, 0)) == 0);
    sqlite3_finalize(sa);
    sqlite3_finalize(sb);
    sqlite3_close(a);
    sqlite3_close(b);
    cdm_model_free(apps);
}

/* A transformable attribute holding an archived NSDictionary ([Int: String], as an app keeps a
** gallery's preview URLs): cdm_object_get_value gives CDM_VALUE_DICTIONARY, its entries' keys and
** values in archive order. The bytes are NSKeyedArchiver's layout of {1: "https://a/1.jpg", 2: "not a url"}. */
static const unsigned char PREVIEWS_ARCHIVE[] = {
    98, 112, 108, 105, 115, 116, 48, 48, 212, 1, 2, 3, 4, 5, 6, 29, 32, 89, 36, 97, 114, 99, 104, 105, 118, 101,
    114, 88, 36, 111, 98, 106, 101, 99, 116, 115, 84, 36, 116, 111, 112, 88, 36, 118, 101, 114, 115, 105, 111,
    110, 95, 16, 15, 78, 83, 75, 101, 121, 101, 100, 65, 114, 99, 104, 105, 118, 101, 114, 167, 7, 8, 19, 20, 21,
    22, 23, 85, 36, 110, 117, 108, 108, 211, 9, 10, 11, 12, 13, 16, 86, 36, 99, 108, 97, 115, 115, 87, 78, 83, 46,
    107, 101, 121, 115, 90, 78, 83, 46, 111, 98, 106, 101, 99, 116, 115, 128, 6, 162, 14, 15, 128, 2, 128, 3, 162,
    17, 18, 128, 4, 128, 5, 16, 1, 16, 2, 95, 16, 15, 104, 116, 116, 112, 115, 58, 47, 47, 97, 47, 49, 46, 106,
    112, 103, 89, 110, 111, 116, 32, 97, 32, 117, 114, 108, 210, 24, 25, 26, 27, 88, 36, 99, 108, 97, 115, 115,
    101, 115, 90, 36, 99, 108, 97, 115, 115, 110, 97, 109, 101, 162, 27, 28, 92, 78, 83, 68, 105, 99, 116, 105,
    111, 110, 97, 114, 121, 88, 78, 83, 79, 98, 106, 101, 99, 116, 209, 30, 31, 84, 114, 111, 111, 116, 128, 1,
    18, 0, 1, 134, 160, 8, 17, 27, 36, 41, 50, 68, 76, 82, 89, 96, 104, 115, 117, 120, 122, 124, 127, 129, 131,
    133, 135, 153, 163, 168, 177, 188, 191, 204, 213, 216, 221, 223, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0,
    33, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 228
};

typedef struct { int dictionaries, entries_ok, others_mismatch; } previews_read;

static int read_previews(cdm_context *ctx, cdm_object *source, void *user) {
    previews_read *seen = user;
    cdm_value *value = NULL, *key = NULL, *entry = NULL;
    size_t count = 0, length = 0;
    int64_t number = 0;
    const char *text = NULL;
    if (cdm_object_get_value(source, "shots", &value) == CDM_OK && cdm_value_type(value) == CDM_VALUE_DICTIONARY
        && cdm_value_dictionary_count(value, &count) == CDM_OK && count == 2) {
        seen->dictionaries++;
        int ok = 1;
        for (size_t i = 0; i < count; i++) {
            ok = ok && cdm_value_dictionary_key_at(value, i, &key) == CDM_OK && cdm_value_int64(key, &number) == CDM_OK
                 && cdm_value_dictionary_value_at(value, i, &entry) == CDM_OK
                 && cdm_value_text(entry, &text, &length) == CDM_OK;
            ok = ok && ((number == 1 && length == 15 && memcmp(text, "https://a/1.jpg", 15) == 0)
                        || (number == 2 && length == 9 && memcmp(text, "not a url", 9) == 0));
        }
        if (ok && cdm_value_dictionary_key_at(value, 2, &key) == CDM_NOTFOUND) seen->entries_ok++;
    }
    cdm_value *name = NULL;
    if (cdm_object_get_value(source, "name", &name) == CDM_OK
        && cdm_value_dictionary_count(name, &count) == CDM_MISMATCH) seen->others_mismatch++;
    cdm_object *destination = NULL;
    int rc = cdm_context_create_instance(ctx, "App", &destination);
    if (rc == CDM_OK) rc = cdm_context_associate(ctx, source, destination);
    return rc;
}

/* Makes a store `name` with one App whose shots are PREVIEWS_ARCHIVE and migrates it to `out`
** through the PreviewPolicy whose create_destination_instances is `hook` (with `seen` as its
** user data). */
static void run_preview_policy(cdm_model *apps, const char *name, char *out, size_t out_size,
                               int (*hook)(cdm_context *, cdm_object *, void *), void *seen) {
    static const char *MAPPING =
        "{\"entityMappings\": [{\"name\": \"AppToApp\", \"sourceEntity\": \"App\", \"destinationEntity\": \"App\","
        " \"predicate\": \"TRUEPREDICATE\", \"policy\": \"PreviewPolicy\"}]}";
    static char source[512], file[512];
    snprintf(file, sizeof file, "%s.sqlite", name);
    snprintf(source, sizeof source, "%s", path_in_dir(file));
    snprintf(file, sizeof file, "%s-out.sqlite", name);
    snprintf(out, out_size, "%s", path_in_dir(file));
    cdm_store *store = NULL;
    cdm_object *app = NULL;
    CHECK_RC(cdm_store_create(apps, source, &store), CDM_OK);
    CHECK_RC(cdm_store_insert(store, "App", &app), CDM_OK);
    CHECK_RC(cdm_object_set_text(app, "name", "gallery", CDM_NUL_TERMINATED), CDM_OK);
    CHECK_RC(cdm_object_set_blob(app, "shots", PREVIEWS_ARCHIVE, sizeof PREVIEWS_ARCHIVE), CDM_OK);
    CHECK_RC(cdm_store_save(store), CDM_OK);
    cdm_store_close(store);
    cdm_mapping *mapping = NULL;
    CHECK_RC(cdm_mapping_from_json(MAPPING, &mapping), CDM_OK);
    cdm_migration *migration = NULL;
    CHECK_RC(cdm_migration_new(apps, apps, &mapping, 1, &migration), CDM_OK);
    cdm_mapping_free(mapping);
    cdm_policy hooks;
    memset(&hooks, 0, sizeof hooks);
    hooks.create_destination_instances = hook;
    CHECK_RC(cdm_migration_register_policy(migration, "PreviewPolicy", &hooks, sizeof hooks, seen, NULL), CDM_OK);
    CHECK_RC(cdm_migration_run(migration, source, out), CDM_OK);
    cdm_migration_free(migration);
}

static void test_reading_a_transformable_dictionary(void) {
    cdm_model *apps = NULL;
    CHECK_RC(cdm_model_from_json(APPS_MODEL, &apps), CDM_OK);
    static char out[512];
    previews_read seen = {0, 0, 0};
    run_preview_policy(apps, "previews", out, sizeof out, read_previews, &seen);
    CHECK(seen.dictionaries == 1);
    CHECK(seen.entries_ok == 1);
    CHECK(seen.others_mismatch == 1);
    cdm_model_free(apps);
}

/* A policy sets a dictionary on a transformable attribute (EhPanda-style: the source's
** [Int: String] becomes [Int: URL], plus a nested array and dictionary) built with
** cdm_object_new_value, cdm_value_set_dictionary and cdm_value_dictionary_add_new; the migrated
** store reads it back as that dictionary. Misuse is refused with a code, never a trap. */
typedef struct { int built, refusals_ok; } previews_written;

static int add_text_entry(cdm_value *dictionary, int64_t key, const char *text, int as_url) {
    cdm_value *k = NULL, *v = NULL;
    int rc = cdm_value_dictionary_add_new(dictionary, &k, &v);
    if (rc == CDM_OK) rc = cdm_value_set_int64(k, key);
    if (rc == CDM_OK) rc = as_url ? cdm_value_set_uri(v, text, CDM_NUL_TERMINATED)
                                  : cdm_value_set_text(v, text, CDM_NUL_TERMINATED);
    return rc;
}

static int write_previews(cdm_context *ctx, cdm_object *source, void *user) {
    previews_written *seen = user;
    cdm_object *destination = NULL;
    int rc = cdm_context_create_instance(ctx, "App", &destination);
    if (rc == CDM_OK) rc = cdm_context_associate(ctx, source, destination);
    if (rc != CDM_OK) return rc;
    cdm_value *shots = NULL, *key = NULL, *entry = NULL, *urls = NULL;
    size_t count = 0, length = 0;
    int64_t number = 0;
    const char *text = NULL;
    if (cdm_object_get_value(source, "shots", &shots) != CDM_OK || cdm_value_dictionary_count(shots, &count) != CDM_OK)
        return CDM_OK;
    if (cdm_object_new_value(destination, &urls) != CDM_OK || cdm_value_set_dictionary(urls) != CDM_OK) return CDM_OK;
    for (size_t i = 0; i < count; i++) {
        if (cdm_value_dictionary_key_at(shots, i, &key) != CDM_OK || cdm_value_int64(key, &number) != CDM_OK
            || cdm_value_dictionary_value_at(shots, i, &entry) != CDM_OK
            || cdm_value_text(entry, &text, &length) != CDM_OK)
            return CDM_OK;
        if (strncmp(text, "https://", 8) == 0 && add_text_entry(urls, number, text, 1) != CDM_OK) return CDM_OK;
    }
    /* "meta" -> {"tags": ["a", 3], "note": "n"}: nested shapes through member handles. */
    cdm_value *meta_key = NULL, *meta = NULL, *k = NULL, *v = NULL, *element = NULL;
    int ok = cdm_value_dictionary_add_new(urls, &meta_key, &meta) == CDM_OK
             && cdm_value_set_text(meta_key, "meta", CDM_NUL_TERMINATED) == CDM_OK
             && cdm_value_set_dictionary(meta) == CDM_OK && cdm_value_dictionary_add_new(meta, &k, &v) == CDM_OK
             && cdm_value_set_text(k, "tags", CDM_NUL_TERMINATED) == CDM_OK && cdm_value_set_collection(v) == CDM_OK
             && cdm_value_append_new(v, &element) == CDM_OK && cdm_value_set_text(element, "a", 1) == CDM_OK
             && cdm_value_append_new(v, &element) == CDM_OK && cdm_value_set_int64(element, 3) == CDM_OK
             && cdm_value_dictionary_add_new(meta, &k, &v) == CDM_OK
             && cdm_value_set_text(k, "note", CDM_NUL_TERMINATED) == CDM_OK
             && cdm_value_set_text(v, "n", CDM_NUL_TERMINATED) == CDM_OK;
    if (ok && cdm_object_set_value(destination, "shots", urls) == CDM_OK) seen->built++;
    /* Refusals: an argument is read-only, a non-dictionary takes no entries, a key given twice,
    ** a relationship-less unknown key, NULL out-pointers. */
    cdm_value *twice = NULL, *scratch = NULL;
    int refusals = cdm_value_set_dictionary(shots) == CDM_MISUSE
                   && cdm_value_dictionary_add_new(shots, &k, &v) == CDM_MISUSE
                   && cdm_object_new_value(destination, &scratch) == CDM_OK
                   && cdm_value_dictionary_add_new(scratch, &k, &v) == CDM_MISMATCH
                   && cdm_value_dictionary_add_new(urls, NULL, &v) == CDM_MISUSE
                   && cdm_object_new_value(destination, NULL) == CDM_MISUSE
                   && cdm_object_new_value(destination, &twice) == CDM_OK && cdm_value_set_dictionary(twice) == CDM_OK
                   && add_text_entry(twice, 1, "a", 0) == CDM_OK && add_text_entry(twice, 1, "b", 0) == CDM_OK
                   && cdm_object_set_value(destination, "shots", twice) == CDM_INVALID_ARGUMENT
                   && strstr(cdm_context_errmsg(ctx), "more than once") != NULL
                   && cdm_object_set_value(destination, "nothing", urls) == CDM_NOTFOUND
                   && cdm_object_set_value(destination, "shots", NULL) == CDM_MISUSE;
    if (refusals) seen->refusals_ok++;
    return CDM_OK;
}

static void test_writing_a_transformable_dictionary(void) {
    cdm_model *apps = NULL;
    CHECK_RC(cdm_model_from_json(APPS_MODEL, &apps), CDM_OK);
    static char out[512];
    previews_written seen = {0, 0};
    run_preview_policy(apps, "previews-written", out, sizeof out, write_previews, &seen);
    cdm_store *store = NULL;
    CHECK(seen.built == 1);
    CHECK(seen.refusals_ok == 1);
    /* Read back: {1: URL "https://a/1.jpg", "meta": {"tags": ["a", 3], "note": "n"}}. */
    CHECK_RC(cdm_store_open(out, apps, &store), CDM_OK);
    cdm_list *list = NULL;
    size_t count = 0;
    CHECK_RC(cdm_store_fetch(store, "App", NULL, NULL, 0, NULL, 0, 0, 0, &list), CDM_OK);
    cdm_object *read = NULL;
    CHECK_RC(cdm_list_object_at(list, 0, &read), CDM_OK);
    cdm_value *value = NULL, *key = NULL, *entry = NULL;
    CHECK_RC(cdm_object_get_value(read, "shots", &value), CDM_OK);
    CHECK(cdm_value_type(value) == CDM_VALUE_DICTIONARY);
    CHECK_RC(cdm_value_dictionary_count(value, &count), CDM_OK);
    CHECK(count == 2);
    int64_t number = 0;
    const char *text = NULL;
    size_t length = 0;
    CHECK_RC(cdm_value_dictionary_key_at(value, 0, &key), CDM_OK);
    CHECK_RC(cdm_value_int64(key, &number), CDM_OK);
    CHECK(number == 1);
    CHECK_RC(cdm_value_dictionary_value_at(value, 0, &entry), CDM_OK);
    CHECK(cdm_value_type(entry) == CDM_VALUE_URI);
    CHECK_RC(cdm_value_text(entry, &text, &length), CDM_OK);
    CHECK(length == 15 && memcmp(text, "https://a/1.jpg", 15) == 0);
    char *json = NULL;
    CHECK_RC(cdm_value_dictionary_value_at(value, 1, &entry), CDM_OK);
    CHECK_RC(cdm_value_to_json(entry, &json), CDM_OK);
    CHECK_STR(json, "[[\"tags\",[\"a\",3]],[\"note\",\"n\"]]");
    cdm_free(json);
    cdm_store_close(store);
    cdm_model_free(apps);
}

int main(void) {
    if (!scratch_begin("policy-calls")) return 2;
    cdm_model *src = NULL, *dst = NULL;
    CHECK_RC(cdm_model_from_json(SOURCE_MODEL, &src), CDM_OK);
    CHECK_RC(cdm_model_from_json(DESTINATION_MODEL, &dst), CDM_OK);
    const char *source = path_in_dir("v1.sqlite");
    static char source_path[512];
    snprintf(source_path, sizeof source_path, "%s", source);
    if (make_source(src, source_path)) {
        test_policy_methods(src, dst, source_path);
        test_policy_method_results_and_unknown_selectors(src, dst, source_path);
        test_sorted_fetches(src, dst, source_path);
        test_relationship_results_and_manager_arguments();
        test_plain_values_in_a_collection_result();
        test_reading_a_transformable_attribute();
        test_reading_a_transformable_dictionary();
        test_writing_a_transformable_dictionary();
    } else {
        failed++;
        fprintf(stderr, "FAIL: could not make the source store\n");
    }
    cdm_model_free(src);
    cdm_model_free(dst);
    return scratch_end("");
}
