/* C tests of the query, identity, introspection, user-info, `super` and bulk-field API
** through a library-shaped app migrated in two model steps with policies written in C:
**   step 1 (V1 → V2): Book.genre, a free-text string, becomes a shared Genre entity that the
**     policy finds with a destination fetch (no policy-side dictionary);
**   step 2 (V2 → V3): two mapping models in two passes; pass 1 makes genres and authors and keeps
**     source URI → destination URI in the manager's user info, pass 2's policy links each book to
**     the instances pass 1 made, found by their source object IDs.
** The result is checked row by row with sqlite3. Every new function and its error paths are
** exercised on the way. Prints "N passed, M failed" last. */
#include <cdmigrate.h>
#include <ctype.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scratch.h"
#include "cdmigrate_internal.h"
/* Inside hooks: a failed call stops the hook with its code (the migration reports it). */
#define TRY(expr) do { int rc_ = (expr); if (rc_ != CDM_OK) { fprintf(stderr, "  %s:%d: %s: %s\n", __FILE__, __LINE__, #expr, cdm_last_errmsg()); return rc_; } } while (0)

/* ------------------------------------------------------------------------------------------ */
/* Models and mappings */

#define AUTHOR_V1 \
    " {\"name\": \"Author\", \"attributes\": [{\"name\": \"name\", \"type\": \"string\"}]," \
    "  \"relationships\": [{\"name\": \"books\", \"destination\": \"Book\", \"inverse\": \"authors\", \"toMany\": true}]}," \
    " {\"name\": \"Translator\", \"parent\": \"Author\", \"attributes\": [{\"name\": \"language\", \"type\": \"string\"}]},"

static const char *LIB_V1 =
    "{\"name\": \"LibraryV1\", \"entities\": [" AUTHOR_V1
    " {\"name\": \"Book\", \"attributes\": [{\"name\": \"title\", \"type\": \"string\", \"optional\": false},"
    "   {\"name\": \"genre\", \"type\": \"string\"}, {\"name\": \"year\", \"type\": \"integer32\"},"
    "   {\"name\": \"isbn\", \"type\": \"string\"}, {\"name\": \"price\", \"type\": \"decimal\"}],"
    "  \"relationships\": [{\"name\": \"authors\", \"destination\": \"Author\", \"inverse\": \"books\", \"toMany\": true}]}]}";

static const char *LIB_V2 =
    "{\"name\": \"LibraryV2\", \"entities\": [" AUTHOR_V1
    " {\"name\": \"Genre\", \"attributes\": [{\"name\": \"name\", \"type\": \"string\"}],"
    "  \"relationships\": [{\"name\": \"books\", \"destination\": \"Book\", \"inverse\": \"genre\", \"toMany\": true}]},"
    " {\"name\": \"Book\", \"attributes\": [{\"name\": \"title\", \"type\": \"string\", \"optional\": false},"
    "   {\"name\": \"year\", \"type\": \"integer32\"}, {\"name\": \"isbn\", \"type\": \"string\"}, {\"name\": \"price\", \"type\": \"decimal\"}],"
    "  \"relationships\": [{\"name\": \"authors\", \"destination\": \"Author\", \"inverse\": \"books\", \"toMany\": true},"
    "   {\"name\": \"genre\", \"destination\": \"Genre\", \"inverse\": \"books\"}]}]}";

static const char *LIB_V3 =
    "{\"name\": \"LibraryV3\", \"entities\": ["
    " {\"name\": \"Author\", \"attributes\": [{\"name\": \"name\", \"type\": \"string\"}, {\"name\": \"sortName\", \"type\": \"string\"}],"
    "  \"relationships\": [{\"name\": \"books\", \"destination\": \"Book\", \"inverse\": \"authors\", \"toMany\": true}]},"
    " {\"name\": \"Translator\", \"parent\": \"Author\", \"attributes\": [{\"name\": \"language\", \"type\": \"string\"}]},"
    " {\"name\": \"Genre\", \"attributes\": [{\"name\": \"name\", \"type\": \"string\"}, {\"name\": \"code\", \"type\": \"string\"}],"
    "  \"relationships\": [{\"name\": \"books\", \"destination\": \"Book\", \"inverse\": \"genre\", \"toMany\": true, \"ordered\": true}]},"
    " {\"name\": \"Book\", \"attributes\": [{\"name\": \"title\", \"type\": \"string\", \"optional\": false},"
    "   {\"name\": \"year\", \"type\": \"integer32\"}, {\"name\": \"isbn\", \"type\": \"string\"}, {\"name\": \"price\", \"type\": \"decimal\"}],"
    "  \"relationships\": [{\"name\": \"authors\", \"destination\": \"Author\", \"inverse\": \"books\", \"toMany\": true},"
    "   {\"name\": \"genre\", \"destination\": \"Genre\", \"inverse\": \"books\"}]}]}";

#define DI(mapping, path) "FUNCTION($manager, \\\"destinationInstancesForEntityMappingNamed:sourceInstances:\\\", \\\"" mapping "\\\", " path ")"

static const char *STEP1 =
    "{\"name\": \"V1toV2\", \"entityMappings\": ["
    " {\"name\": \"AuthorToAuthor\", \"sourceEntity\": \"Author\", \"destinationEntity\": \"Author\", \"predicate\": \"TRUEPREDICATE\","
    "  \"attributeMappings\": [{\"name\": \"name\", \"valueExpression\": \"$source.name\"}],"
    "  \"relationshipMappings\": [{\"name\": \"books\", \"valueExpression\": \"" DI("BookToBook", "$source.books") "\"}]},"
    " {\"name\": \"TranslatorToTranslator\", \"sourceEntity\": \"Translator\", \"destinationEntity\": \"Translator\", \"predicate\": \"TRUEPREDICATE\","
    "  \"attributeMappings\": [{\"name\": \"name\", \"valueExpression\": \"$source.name\"}, {\"name\": \"language\", \"valueExpression\": \"$source.language\"}],"
    "  \"relationshipMappings\": [{\"name\": \"books\", \"valueExpression\": \"" DI("BookToBook", "$source.books") "\"}]},"
    " {\"name\": \"BookToBook\", \"type\": \"custom\", \"sourceEntity\": \"Book\", \"destinationEntity\": \"Book\", \"predicate\": \"TRUEPREDICATE\","
    "  \"policy\": \"GenrePolicy\", \"userInfo\": {\"modelVersion\": 2, \"genreEntity\": \"Genre\", \"label\": \"2\", \"ratio\": 0.5, \"strict\": true},"
    "  \"attributeMappings\": [{\"name\": \"title\", \"valueExpression\": \"$source.title\"}, {\"name\": \"year\", \"valueExpression\": \"$source.year\"},"
    "   {\"name\": \"isbn\", \"valueExpression\": \"$source.isbn\"}, {\"name\": \"price\", \"valueExpression\": \"$source.price\"}],"
    "  \"relationshipMappings\": [{\"name\": \"genre\"}]}]}";

static const char *STEP2_PASS1 =
    "{\"name\": \"V2toV3-people-and-genres\", \"entityMappings\": ["
    " {\"name\": \"GenreToGenre\", \"type\": \"custom\", \"sourceEntity\": \"Genre\", \"destinationEntity\": \"Genre\", \"predicate\": \"name != nil\","
    "  \"policy\": \"RememberPolicy\", \"userInfo\": {\"copy\": \"fields\"}},"
    " {\"name\": \"AuthorToAuthor\", \"sourceEntity\": \"Author\", \"destinationEntity\": \"Author\", \"predicate\": \"TRUEPREDICATE\","
    "  \"policy\": \"RememberPolicy\","
    "  \"attributeMappings\": [{\"name\": \"name\", \"valueExpression\": \"$source.name\"}]},"
    " {\"name\": \"TranslatorToTranslator\", \"sourceEntity\": \"Translator\", \"destinationEntity\": \"Translator\", \"predicate\": \"TRUEPREDICATE\","
    "  \"policy\": \"RememberPolicy\","
    "  \"attributeMappings\": [{\"name\": \"name\", \"valueExpression\": \"$source.name\"}, {\"name\": \"language\", \"valueExpression\": \"$source.language\"}]}]}";

static const char *STEP2_PASS2 =
    "{\"name\": \"V2toV3-books\", \"entityMappings\": ["
    " {\"name\": \"BookToBook\", \"sourceEntity\": \"Book\", \"destinationEntity\": \"Book\", \"predicate\": \"isbn != nil\","
    "  \"policy\": \"LinkPolicy\","
    "  \"attributeMappings\": [{\"name\": \"title\", \"valueExpression\": \"$source.title\"}, {\"name\": \"year\", \"valueExpression\": \"$source.year\"},"
    "   {\"name\": \"isbn\", \"valueExpression\": \"$source.isbn\"}, {\"name\": \"price\", \"valueExpression\": \"$source.price\"}]}]}";

/* ------------------------------------------------------------------------------------------ */
/* The generated library: deterministic, with messy genre strings. */

#define BOOKS 120
#define AUTHORS 12
#define TRANSLATORS 3
static const char *RAW_GENRES[] = {"fiction", " Fiction", "FICTION ", "history", "History", "science", " poetry", NULL, "Science "};
#define RAW_GENRE_COUNT 9
static const char *FIRST[] = {"Ana", "Bruno", "Carla", "Diego", "Elena", "Felipe", "Gloria", "Hugo", "Irene", "Jorge", "Karen", "Luis", "Marta", "Nico", "Olga"};
static const char *LAST[] = {"Alonso", "Benitez", "Castro", "Duran", "Escobar", "Flores", "Garcia", "Herrera", "Ibarra", "Jimenez", "Kuri", "Lopez", "Mora", "Nunez", "Ortiz"};

static int book_author(int i, int k) { return k == 0 ? i % (AUTHORS + TRANSLATORS) : (i * 7 + 3) % (AUTHORS + TRANSLATORS); }
static int withdrawn(int i) { return i % 17 == 0; }

/* "  fiction " → "Fiction"; NULL for nothing. */
static void normalize_genre(const char *raw, size_t length, char *out, size_t size) {
    while (length && isspace((unsigned char)*raw)) { raw++; length--; }
    while (length && isspace((unsigned char)raw[length - 1])) length--;
    if (length >= size) length = size - 1;
    for (size_t i = 0; i < length; i++) out[i] = (char)(i == 0 ? toupper((unsigned char)raw[i]) : tolower((unsigned char)raw[i]));
    out[length] = 0;
}

static int make_v1(const char *path) {
    cdm_model *model = NULL;
    CHECK_RC(cdm_model_from_json(LIB_V1, &model), CDM_OK);
    cdm_store *store = NULL;
    CHECK_RC(cdm_store_create(model, path, &store), CDM_OK);
    cdm_object *people[AUTHORS + TRANSLATORS];
    for (int a = 0; a < AUTHORS + TRANSLATORS; a++) {
        char name[64];
        snprintf(name, sizeof name, "%s %s", FIRST[a], LAST[a]);
        int is_translator = a >= AUTHORS;
        CHECK_RC(cdm_store_insert(store, is_translator ? "Translator" : "Author", &people[a]), CDM_OK);
        cdm_field fields[2] = {cdm_field_text("name", name), cdm_field_text("language", is_translator ? "es" : "")};
        CHECK_RC(cdm_object_set_fields(people[a], fields, is_translator ? 2 : 1, 0), CDM_OK);
    }
    for (int i = 0; i < BOOKS; i++) {
        cdm_object *book = NULL;
        char title[64], isbn[32], price[16];
        snprintf(title, sizeof title, "%sBook %d", withdrawn(i) ? "Withdrawn " : "", i);
        snprintf(isbn, sizeof isbn, "978-%06d", i);
        snprintf(price, sizeof price, "%d.99", 5 + i % 20);
        CHECK_RC(cdm_store_insert(store, "Book", &book), CDM_OK);
        const char *genre = RAW_GENRES[i % RAW_GENRE_COUNT];
        cdm_field fields[5] = {cdm_field_text("title", title), genre ? cdm_field_text("genre", genre) : cdm_field_null("genre"),
                               cdm_field_int64("year", 1950 + i % 70), cdm_field_text("isbn", isbn), cdm_field_text("price", price)};
        fields[4].type = CDM_VALUE_DECIMAL;
        CHECK_RC(cdm_object_set_fields(book, fields, 5, 0), CDM_OK);
        CHECK_RC(cdm_object_add_object(book, "authors", people[book_author(i, 0)]), CDM_OK);
        if (book_author(i, 1) != book_author(i, 0)) CHECK_RC(cdm_object_add_object(book, "authors", people[book_author(i, 1)]), CDM_OK);
    }
    CHECK_RC(cdm_store_save(store), CDM_OK);
    cdm_store_close(store);
    cdm_model_free(model);
    return access(path, F_OK) == 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Step 1: GenrePolicy — super, then a shared Genre found by a destination fetch. */

typedef struct {
    int genre_index;       /* source Book.genre, resolved in begin */
    int fetches, genres_made, books, probes_done;
    int model_version;
} genre_policy;

static void probe_step1(cdm_context *ctx, cdm_object *src, cdm_object *book);

static int genre_begin(cdm_context *ctx, void *user) {
    genre_policy *p = user;
    const char *version = NULL;
    TRY(cdm_context_mapping_user_info(ctx, "modelVersion", &version));
    p->model_version = version ? atoi(version) : 0;
    const cdm_model *source = NULL;
    TRY(cdm_context_model(ctx, CDM_STORE_SOURCE, &source));
    cdm_attribute_info info;
    TRY(cdm_model_attribute_info(source, "Book", "genre", &info));
    p->genre_index = info.index;
    return CDM_OK;
}

static int genre_create(cdm_context *ctx, cdm_object *src, void *user) {
    genre_policy *p = user;
    cdm_object *book = NULL;
    TRY(cdm_context_default_create_destination_instances(ctx, src, &book));   /* super */
    const char *raw = NULL; size_t length = 0; int is_null = 0;
    TRY(cdm_object_get_text_at(src, p->genre_index, &raw, &length, &is_null));
    if (!p->probes_done++) probe_step1(ctx, src, book);
    p->books++;
    if (is_null) return CDM_OK;
    char name[64];
    normalize_genre(raw, length, name, sizeof name);
    if (!*name) return CDM_OK;
    cdm_field argument = cdm_field_text(NULL, name);
    cdm_list *found = NULL;
    TRY(cdm_context_fetch_destination(ctx, "Genre", "name == %@", &argument, 1, 0, 1, &found));
    p->fetches++;
    size_t count = 0;
    TRY(cdm_list_count(found, &count));
    cdm_object *genre = NULL;
    if (count) {
        TRY(cdm_list_object_at(found, 0, &genre));
    } else {
        cdm_field field = cdm_field_text("name", name);
        TRY(cdm_context_create_instance_with_fields(ctx, "Genre", &field, 1, 0, NULL, &genre));
        p->genres_made++;
    }
    TRY(cdm_object_set_object(book, "genre", genre));
    cdm_list_release(found);
    return CDM_OK;
}

static int genre_relationships(cdm_context *ctx, cdm_object *dst, void *user) {
    (void)user;
    return cdm_context_default_create_relationships(ctx, dst);   /* super: the (empty) genre mapping */
}

/* Every new function and its error paths, once, from inside a real hook. */
static void probe_step1(cdm_context *ctx, cdm_object *src, cdm_object *book) {
    /* Mapping introspection. */
    const char *s = NULL, *k = NULL;
    size_t n = 0;
    CHECK_RC(cdm_context_mapping_user_info(ctx, "genreEntity", &s), CDM_OK);
    CHECK_STR(s, "Genre");
    CHECK_RC(cdm_context_mapping_user_info(ctx, "absent", &s), CDM_OK);
    CHECK(s == NULL);
    CHECK_RC(cdm_context_mapping_user_info(ctx, NULL, &s), CDM_MISUSE);
    CHECK_RC(cdm_context_mapping_user_info_count(ctx, &n), CDM_OK);
    CHECK(n == 5);
    CHECK_RC(cdm_context_mapping_user_info_at(ctx, 2, &k, &s), CDM_OK);
    CHECK_STR(k, "modelVersion");
    CHECK_STR(s, "2");   /* the number 2, given as text */
    CHECK_RC(cdm_context_mapping_user_info_at(ctx, 5, &k, &s), CDM_NOTFOUND);
    CHECK_RC(cdm_context_mapping_user_info(ctx, "ratio", &s), CDM_OK);
    CHECK_STR(s, "0.5");
    CHECK_RC(cdm_context_mapping_user_info(ctx, "strict", &s), CDM_OK);
    CHECK_STR(s, "YES");
    /* Typed: the number 2 and the string "2" stay apart. */
    cdm_value *v = NULL;
    int64_t i64 = 0; double d = 0; int flag = 0; size_t length = 0;
    CHECK_RC(cdm_context_mapping_user_info_value(ctx, "modelVersion", &v), CDM_OK);
    CHECK(cdm_value_type(v) == CDM_VALUE_INTEGER);
    CHECK_RC(cdm_value_int64(v, &i64), CDM_OK);
    CHECK(i64 == 2);
    CHECK_RC(cdm_context_mapping_user_info_value(ctx, "label", &v), CDM_OK);
    CHECK(cdm_value_type(v) == CDM_VALUE_STRING);
    CHECK_RC(cdm_value_text(v, &s, &length), CDM_OK);
    CHECK_STR(s, "2");
    CHECK(length == 1);
    CHECK_RC(cdm_context_mapping_user_info_value(ctx, "ratio", &v), CDM_OK);
    CHECK(cdm_value_type(v) == CDM_VALUE_DOUBLE);
    CHECK_RC(cdm_value_double(v, &d), CDM_OK);
    CHECK(d == 0.5);
    CHECK_RC(cdm_context_mapping_user_info_value(ctx, "strict", &v), CDM_OK);
    CHECK(cdm_value_type(v) == CDM_VALUE_BOOL);
    CHECK_RC(cdm_value_bool(v, &flag), CDM_OK);
    CHECK(flag == 1);
    CHECK_RC(cdm_value_set_int64(v, 3), CDM_MISUSE);   /* read-only */
    CHECK_RC(cdm_context_mapping_user_info_value(ctx, "absent", &v), CDM_OK);
    CHECK(v == NULL);
    CHECK_RC(cdm_context_mapping_user_info_value(ctx, NULL, &v), CDM_MISUSE);
    CHECK_RC(cdm_context_mapping_user_info_value(ctx, "label", NULL), CDM_MISUSE);
    CHECK_RC(cdm_context_mapping_user_info_value_at(ctx, 0, &k, &v), CDM_OK);
    CHECK_STR(k, "genreEntity");
    CHECK(cdm_value_type(v) == CDM_VALUE_STRING);
    CHECK_RC(cdm_context_mapping_user_info_value_at(ctx, 4, &k, &v), CDM_OK);
    CHECK_STR(k, "strict");
    CHECK(cdm_value_type(v) == CDM_VALUE_BOOL);
    CHECK_RC(cdm_context_mapping_user_info_value_at(ctx, 5, &k, &v), CDM_NOTFOUND);
    CHECK_RC(cdm_context_mapping_user_info_value_at(ctx, 0, NULL, &v), CDM_MISUSE);
    CHECK_RC(cdm_context_property_mapping_count(ctx, CDM_PROPERTY_ATTRIBUTE, &n), CDM_OK);
    CHECK(n == 4);
    CHECK_RC(cdm_context_property_mapping_at(ctx, CDM_PROPERTY_ATTRIBUTE, 1, &k, &s), CDM_OK);
    CHECK_STR(k, "year");
    CHECK_STR(s, "$source.year");
    CHECK_RC(cdm_context_property_mapping_count(ctx, CDM_PROPERTY_RELATIONSHIP, &n), CDM_OK);
    CHECK(n == 1);
    CHECK_RC(cdm_context_property_mapping(ctx, CDM_PROPERTY_RELATIONSHIP, "genre", &s), CDM_OK);
    CHECK(s == NULL);
    CHECK_RC(cdm_context_property_mapping(ctx, CDM_PROPERTY_ATTRIBUTE, "isbn", &s), CDM_OK);
    CHECK_STR(s, "$source.isbn");
    CHECK_RC(cdm_context_property_mapping(ctx, CDM_PROPERTY_ATTRIBUTE, "nope", &s), CDM_NOTFOUND);
    CHECK_HAS(cdm_context_errmsg(ctx), "BookToBook");
    CHECK_RC(cdm_context_property_mapping_at(ctx, CDM_PROPERTY_ATTRIBUTE, 9, &k, &s), CDM_NOTFOUND);
    CHECK_RC(cdm_context_property_mapping_count(ctx, 7, &n), CDM_INVALID_ARGUMENT);

    /* Model introspection, inherited properties included. */
    const cdm_model *dm = NULL;
    CHECK_RC(cdm_context_model(ctx, CDM_STORE_DESTINATION, &dm), CDM_OK);
    CHECK_RC(cdm_context_model(ctx, 5, &dm), CDM_INVALID_ARGUMENT);
    CHECK_RC(cdm_context_model(ctx, CDM_STORE_DESTINATION, NULL), CDM_MISUSE);
    const char *parent = NULL;
    CHECK_RC(cdm_model_entity_parent(dm, "Translator", &parent), CDM_OK);
    CHECK_STR(parent, "Author");
    CHECK_RC(cdm_model_entity_parent(dm, "Author", &parent), CDM_OK);
    CHECK(parent == NULL);
    CHECK_RC(cdm_model_attribute_count(dm, "Translator", &n), CDM_OK);
    CHECK(n == 2);
    cdm_attribute_info ai;
    CHECK_RC(cdm_model_attribute_at(dm, "Translator", 0, &ai), CDM_OK);
    CHECK_STR(ai.name, "name");
    CHECK_STR(ai.entity, "Author");
    CHECK(ai.type == CDM_ATTR_STRING && ai.index == 0 && ai.is_optional == 1);
    CHECK_RC(cdm_model_attribute_info(dm, "Book", "title", &ai), CDM_OK);
    CHECK(ai.is_optional == 0 && ai.is_transient == 0);
    CHECK_RC(cdm_model_attribute_info(dm, "Book", "price", &ai), CDM_OK);
    CHECK(ai.type == CDM_ATTR_DECIMAL);
    CHECK_RC(cdm_model_attribute_at(dm, "Book", 99, &ai), CDM_NOTFOUND);
    CHECK_RC(cdm_model_attribute_info(dm, "Book", "genre", &ai), CDM_NOTFOUND);
    CHECK_HAS(cdm_last_errmsg(), "genre");
    CHECK_RC(cdm_model_attribute_info(dm, "Book", "title", NULL), CDM_MISUSE);
    CHECK_RC(cdm_model_attribute_count(dm, "Nope", &n), CDM_NOTFOUND);
    CHECK_HAS(cdm_last_errmsg(), "Nope");
    CHECK_RC(cdm_model_relationship_count(dm, "Translator", &n), CDM_OK);
    CHECK(n == 1);
    cdm_relationship_info ri;
    CHECK_RC(cdm_model_relationship_at(dm, "Translator", 0, &ri), CDM_OK);
    CHECK_STR(ri.name, "books");
    CHECK_STR(ri.entity, "Author");
    CHECK_STR(ri.destination_entity, "Book");
    CHECK_STR(ri.inverse, "authors");
    CHECK(ri.is_to_many == 1 && ri.is_ordered == 0);
    CHECK_RC(cdm_model_relationship_info(dm, "Book", "genre", &ri), CDM_OK);
    CHECK(ri.is_to_many == 0 && ri.max_count == 1);
    CHECK_STR(ri.destination_entity, "Genre");
    CHECK_RC(cdm_model_relationship_info(dm, "Book", "title", &ri), CDM_NOTFOUND);
    CHECK_RC(cdm_model_relationship_at(dm, "Book", 5, &ri), CDM_NOTFOUND);
    CHECK_RC(cdm_model_relationship_count(NULL, "Book", &n), CDM_MISUSE);

    /* Identities. */
    int store = -1; const char *entity = NULL; int64_t pk = 0, spk = 0;
    CHECK_RC(cdm_object_id(src, &store, &entity, &spk), CDM_OK);
    CHECK(store == CDM_STORE_SOURCE && spk > 0);
    CHECK_STR(entity, "Book");
    CHECK_RC(cdm_object_id(book, &store, NULL, &pk), CDM_OK);
    CHECK(store == CDM_STORE_DESTINATION && pk > 0);
    CHECK_RC(cdm_object_id(NULL, &store, NULL, NULL), CDM_MISUSE);
    const char *src_uri = NULL, *dst_uri = NULL;
    CHECK_RC(cdm_object_uri(src, &src_uri), CDM_OK);
    CHECK_RC(cdm_object_uri(book, &dst_uri), CDM_OK);
    CHECK(src_uri && dst_uri && strcmp(src_uri, dst_uri) != 0);
    CHECK_HAS(src_uri, "x-coredata://");
    CHECK_HAS(src_uri, "/Book/p");
    cdm_object *again = NULL;
    CHECK_RC(cdm_context_instance_for_uri(ctx, src_uri, &again), CDM_OK);
    const char *title = NULL;
    CHECK_RC(cdm_object_get_text(again, "title", &title, NULL, NULL), CDM_OK);
    CHECK_STR(title, "Withdrawn Book 0");
    CHECK_RC(cdm_context_instance_for_uri(ctx, dst_uri, &again), CDM_OK);   /* still in the write buffer */
    CHECK_RC(cdm_object_get_text(again, "isbn", &title, NULL, NULL), CDM_OK);
    CHECK_STR(title, "978-000000");
    CHECK_RC(cdm_context_instance_with_id(ctx, CDM_STORE_SOURCE, "Book", spk, &again), CDM_OK);
    CHECK_RC(cdm_context_instance_with_id(ctx, CDM_STORE_DESTINATION, "Book", pk, &again), CDM_OK);
    CHECK_RC(cdm_context_instance_with_id(ctx, CDM_STORE_DESTINATION, "Book", 999999, &again), CDM_NOTFOUND);
    CHECK(again == NULL);
    CHECK_RC(cdm_context_instance_with_id(ctx, 9, "Book", 1, &again), CDM_INVALID_ARGUMENT);
    CHECK_RC(cdm_context_instance_with_id(ctx, CDM_STORE_SOURCE, "Nope", 1, &again), CDM_NOTFOUND);
    CHECK_RC(cdm_context_instance_for_uri(ctx, "not a uri", &again), CDM_INVALID_ARGUMENT);
    CHECK_HAS(cdm_context_errmsg(ctx), "not a uri");
    CHECK_RC(cdm_context_instance_for_uri(ctx, "x-coredata://ABC/Book/p1", &again), CDM_INVALID_ARGUMENT);
    char missing[256];
    snprintf(missing, sizeof missing, "%.*sp424242", (int)(strstr(src_uri, "/p") - src_uri + 1), src_uri);
    CHECK_RC(cdm_context_instance_for_uri(ctx, missing, &again), CDM_NOTFOUND);
    CHECK_RC(cdm_context_instance_for_uri(ctx, NULL, &again), CDM_MISUSE);

    /* Bulk read: the whole source row in one call. */
    cdm_field fields[8];
    CHECK_RC(cdm_object_get_fields(src, NULL, 0, &n), CDM_OK);
    CHECK(n == 5);
    CHECK_RC(cdm_object_get_fields(src, fields, 8, &n), CDM_OK);
    CHECK_STR(fields[0].name, "title");
    CHECK(fields[0].type == CDM_VALUE_STRING && fields[0].length == 16);
    CHECK_STR((const char *)fields[0].data, "Withdrawn Book 0");
    CHECK(fields[1].type == CDM_VALUE_STRING && fields[1].index == 1);
    CHECK_STR((const char *)fields[1].data, "fiction");
    CHECK(fields[2].type == CDM_VALUE_INTEGER && fields[2].integer == 1950);
    CHECK(fields[4].type == CDM_VALUE_DECIMAL);
    CHECK_STR((const char *)fields[4].data, "5.99");
    CHECK_RC(cdm_object_get_fields(src, fields, 2, &n), CDM_OK);   /* a short buffer: count says how many there are */
    CHECK(n == 5);
    CHECK_RC(cdm_object_get_fields(src, NULL, 3, &n), CDM_MISUSE);

    /* Bulk write, by name and index, with the dictionary semantics. */
    cdm_object *scratch = NULL;
    cdm_field many[4] = {cdm_field_text("title", "Scratch"), cdm_field_int64("year", 2001), cdm_field_text("notInV2", "x"), cdm_field_null("isbn")};
    cdm_field unknown = cdm_field_text("notInV2", "x");
    CHECK_RC(cdm_context_create_instance_with_fields(ctx, "Genre", &unknown, 1, 0, NULL, &scratch), CDM_NOTFOUND);
    CHECK_HAS(cdm_context_errmsg(ctx), "notInV2");   /* (that nameless Genre stays made: step 2 leaves it out) */
    CHECK_RC(cdm_context_create_instance_with_fields(ctx, "Book", many, 4, CDM_FIELDS_SKIP_UNKNOWN | CDM_FIELDS_SKIP_NULL, NULL, &scratch), CDM_OK);
    CHECK_RC(cdm_object_get_fields(scratch, fields, 8, &n), CDM_OK);
    CHECK_STR((const char *)fields[0].data, "Scratch");
    CHECK(fields[1].integer == 2001 && fields[3].type == CDM_VALUE_NULL);
    cdm_field by_index = cdm_field_text(NULL, "12.5");
    by_index.index = 3;
    by_index.type = CDM_VALUE_DECIMAL;
    CHECK_RC(cdm_object_set_fields(scratch, &by_index, 1, 0), CDM_OK);
    by_index.index = 42;
    CHECK_RC(cdm_object_set_fields(scratch, &by_index, 1, 0), CDM_NOTFOUND);
    CHECK_RC(cdm_object_set_fields(scratch, &by_index, 1, CDM_FIELDS_SKIP_UNKNOWN), CDM_OK);
    cdm_field bad = cdm_field_text("year", "nineteen");
    CHECK_RC(cdm_object_set_fields(scratch, &bad, 1, 0), CDM_MISMATCH);
    CHECK_HAS(cdm_context_errmsg(ctx), "Book.year");
    bad = cdm_field_text("genre", "x");
    CHECK_RC(cdm_object_set_fields(scratch, &bad, 1, 0), CDM_MISMATCH);
    CHECK_HAS(cdm_context_errmsg(ctx), "relationship");
    bad = cdm_field_text("title", "x");
    bad.type = 77;
    CHECK_RC(cdm_object_set_fields(scratch, &bad, 1, 0), CDM_MISMATCH);
    bad = cdm_field_text("title", "bad \xc3\x28");
    CHECK_RC(cdm_object_set_fields(scratch, &bad, 1, 0), CDM_ENCODING);
    CHECK_RC(cdm_object_set_fields(scratch, NULL, 1, 0), CDM_MISUSE);
    CHECK_RC(cdm_context_create_instance_with_fields(ctx, "Nope", NULL, 0, 0, NULL, &scratch), CDM_NOTFOUND);
    cdm_object *made = NULL;
    cdm_field made_title = cdm_field_text("title", "Made");
    CHECK_RC(cdm_context_create_instance_with_fields(ctx, NULL, &made_title, 1, 0, NULL, &made), CDM_OK);  /* the mapping's entity */
    CHECK_RC(cdm_object_entity_name(made, &s), CDM_OK);
    CHECK_STR(s, "Book");

    /* Fetch and count, both stores, arguments, $variables, subentities, limits, errors. */
    cdm_list *list = NULL;
    cdm_field arg = cdm_field_text(NULL, "Scratch");
    CHECK_RC(cdm_context_count_destination(ctx, "Book", "title == %@", &arg, 1, 0, &n), CDM_OK);
    CHECK(n == 1);       /* made above, not yet written: found */
    CHECK_RC(cdm_context_count_destination(ctx, "Book", NULL, NULL, 0, 0, &n), CDM_OK);
    CHECK(n == 3);
    CHECK_RC(cdm_context_count_source(ctx, "Author", NULL, NULL, 0, 0, &n), CDM_OK);
    CHECK(n == AUTHORS + TRANSLATORS);
    CHECK_RC(cdm_context_count_source(ctx, "Author", NULL, NULL, 0, CDM_FETCH_EXCLUDE_SUBENTITIES, &n), CDM_OK);
    CHECK(n == AUTHORS);
    cdm_field vars[2] = {cdm_field_int64("$FROM", 1960), cdm_field_int64("TO", 1964)};
    CHECK_RC(cdm_context_fetch_source(ctx, "Book", "year >= $FROM AND year <= $TO", vars, 2, 0, 0, &list), CDM_OK);
    CHECK_RC(cdm_list_count(list, &n), CDM_OK);
    CHECK(n == 10);      /* 120 books over 70 years: two each */
    cdm_object *const *objects = NULL;
    size_t m = 0;
    CHECK_RC(cdm_list_objects(list, &objects, &m), CDM_OK);
    CHECK(m == 10 && objects != NULL);
    int64_t year = 0;
    CHECK_RC(cdm_object_get_int64(objects[9], "year", &year, NULL), CDM_OK);
    CHECK(year >= 1960 && year <= 1964);
    cdm_object *first = NULL;
    CHECK_RC(cdm_list_object_at(list, 0, &first), CDM_OK);
    CHECK(first == objects[0]);
    CHECK_RC(cdm_list_object_at(list, 10, &first), CDM_NOTFOUND);
    CHECK_RC(cdm_list_count(list, NULL), CDM_MISUSE);
    cdm_list_release(list);
    CHECK_RC(cdm_list_count(list, &n), CDM_MISUSE);          /* released: stale */
    CHECK_RC(cdm_object_get_int64(objects[0], "year", &year, NULL), CDM_MISUSE);
    cdm_list_release(NULL);
    CHECK_RC(cdm_context_fetch_source(ctx, "Book", "year > 2030", NULL, 0, 0, 3, &list), CDM_OK);
    CHECK_RC(cdm_list_count(list, &n), CDM_OK);
    CHECK(n == 0);
    CHECK_RC(cdm_context_fetch_source(ctx, "Author", "name BEGINSWITH %@", &(cdm_field){NULL, -1, CDM_VALUE_STRING, 0, 0, "A", -1, NULL}, 1, 0, 0, &list), CDM_OK);
    CHECK_RC(cdm_list_count(list, &n), CDM_OK);
    CHECK(n == 1);
    cdm_field obj_arg = cdm_field_object(NULL, src);
    CHECK_RC(cdm_context_count_source(ctx, "Book", "SELF == %@", &obj_arg, 1, 0, &n), CDM_OK);
    CHECK(n == 1);
    CHECK_RC(cdm_context_fetch_destination(ctx, "Book", "title == ", NULL, 0, 0, 0, &list), CDM_EXPRESSION_SYNTAX);
    CHECK_HAS(cdm_context_errmsg(ctx), "Book");
    CHECK(cdm_error_offset(cdm_context_error(ctx)) >= 0);
    CHECK(list == NULL);
    CHECK(cdm_context_fetch_destination(ctx, "Book", "colour == 'red'", NULL, 0, 0, 0, &list) != CDM_OK);
    CHECK_HAS(cdm_context_errmsg(ctx), "colour");
    CHECK_RC(cdm_context_fetch_destination(ctx, "Nope", NULL, NULL, 0, 0, 0, &list), CDM_NOTFOUND);
    CHECK_HAS(cdm_context_errmsg(ctx), "Nope");
    CHECK_RC(cdm_context_count_source(ctx, "Book", "title == %@", NULL, 1, 0, &n), CDM_MISUSE);
    CHECK_RC(cdm_context_count_source(ctx, "Book", NULL, NULL, 0, 0, NULL), CDM_MISUSE);
    CHECK_RC(cdm_context_fetch_source(ctx, "Book", NULL, NULL, 0, 0, 0, NULL), CDM_MISUSE);
    cdm_field coll = cdm_field_null(NULL);
    coll.type = CDM_VALUE_COLLECTION;
    CHECK_RC(cdm_context_count_source(ctx, "Book", "title == %@", &coll, 1, 0, &n), CDM_MISMATCH);

    /* (The scratch books have no ISBN: step 2 leaves them out.) */
    CHECK_RC(cdm_object_remove_object(made, "title", book), CDM_MISMATCH);
    CHECK_RC(cdm_object_insert_object(made, "genre", book, 0), CDM_MISMATCH);
    CHECK_RC(cdm_object_remove_object(made, "authors", NULL), CDM_MISUSE);
    CHECK_RC(cdm_object_insert_object(made, "nope", book, 0), CDM_NOTFOUND);
    (void)scratch;
}

/* ------------------------------------------------------------------------------------------ */
/* Step 2, pass 1: RememberPolicy — makes genres and authors, keeps source URI → destination URI. */

typedef struct { char **keys, **values; size_t capacity, count; int *destroyed; } id_map;

static unsigned long hash(const char *s) { unsigned long h = 5381; while (*s) h = h * 33 + (unsigned char)*s++; return h; }
static void map_put(id_map *m, const char *k, const char *v) {
    if ((m->count + 1) * 2 > m->capacity) {
        id_map bigger = {calloc(m->capacity * 2 + 64, sizeof(char *)), calloc(m->capacity * 2 + 64, sizeof(char *)), m->capacity * 2 + 64, 0, m->destroyed};
        for (size_t i = 0; i < m->capacity; i++) if (m->keys[i]) { map_put(&bigger, m->keys[i], m->values[i]); free(m->keys[i]); free(m->values[i]); }
        free(m->keys); free(m->values);
        *m = bigger;
    }
    size_t i = hash(k) % m->capacity;
    while (m->keys[i] && strcmp(m->keys[i], k)) i = (i + 1) % m->capacity;
    if (!m->keys[i]) { m->keys[i] = strdup(k); m->count++; } else free(m->values[i]);
    m->values[i] = strdup(v);
}
static const char *map_get(const id_map *m, const char *k) {
    if (!m->capacity) return NULL;
    size_t i = hash(k) % m->capacity;
    while (m->keys[i]) { if (!strcmp(m->keys[i], k)) return m->values[i]; i = (i + 1) % m->capacity; }
    return NULL;
}
static void map_destroy(void *pointer) {
    id_map *m = pointer;
    for (size_t i = 0; i < m->capacity; i++) { free(m->keys[i]); free(m->values[i]); }
    free(m->keys); free(m->values);
    (*m->destroyed)++;
    free(m);
}

typedef struct { int made, map_destroyed, super_calls; } remember_policy;

static int remember(cdm_context *ctx, cdm_object *src, cdm_object *dst, remember_policy *p) {
    id_map *map = NULL;
    TRY(cdm_context_get_user_info(ctx, "idmap", (void **)&map));
    if (!map) {
        map = calloc(1, sizeof *map);
        map->destroyed = &p->map_destroyed;
        TRY(cdm_context_set_user_info(ctx, "idmap", map, map_destroy));
    }
    const char *from = NULL, *to = NULL;
    TRY(cdm_object_uri(src, &from));
    TRY(cdm_object_uri(dst, &to));
    map_put(map, from, to);
    p->made++;
    return CDM_OK;
}

static int remember_create(cdm_context *ctx, cdm_object *src, void *user) {
    remember_policy *p = user;
    const char *copy = NULL, *entity = NULL;
    TRY(cdm_context_mapping_user_info(ctx, "copy", &copy));
    TRY(cdm_object_entity_name(src, &entity));
    cdm_object *dst = NULL;
    if (copy && !strcmp(copy, "fields")) {
        /* A generic copy: every source attribute the destination has, in two calls. */
        cdm_field fields[8];
        size_t n = 0;
        TRY(cdm_object_get_fields(src, fields, 8, &n));
        TRY(cdm_context_create_instance_with_fields(ctx, NULL, fields, n, CDM_FIELDS_SKIP_UNKNOWN, src, &dst));
        const char *name = fields[0].data;
        char code[4] = {0};
        for (int i = 0; i < 3 && name && name[i]; i++) code[i] = (char)toupper((unsigned char)name[i]);
        TRY(cdm_object_set_text(dst, "code", code, CDM_NUL_TERMINATED));
    } else {
        TRY(cdm_context_default_create_destination_instances(ctx, src, &dst));   /* super */
        p->super_calls++;
        const char *name = NULL;
        TRY(cdm_object_get_text(dst, "name", &name, NULL, NULL));
        const char *space = strchr(name, ' ');
        char sort[128];
        if (space) snprintf(sort, sizeof sort, "%s, %.*s", space + 1, (int)(space - name), name);
        else snprintf(sort, sizeof sort, "%s", name);
        TRY(cdm_object_set_text(dst, "sortName", sort, CDM_NUL_TERMINATED));
    }
    return remember(ctx, src, dst, p);
}

/* Step 2, pass 2: LinkPolicy — finds pass 1's instances by their source IDs and links them. */

typedef struct { int linked, removed, order_checked, order_ok, begin_ok; } link_policy;

static int link_begin(cdm_context *ctx, void *user) {
    link_policy *p = user;
    int pass = -1;
    size_t genres = 0;
    TRY(cdm_context_pass(ctx, &pass));
    TRY(cdm_context_count_destination(ctx, "Genre", NULL, NULL, 0, 0, &genres));   /* made in pass 1 */
    cdm_field name = cdm_field_text("NAME", "Olga Ortiz");
    cdm_list *found = NULL;
    TRY(cdm_context_fetch_destination(ctx, "Author", "name == $NAME", &name, 1, 0, 0, &found));
    size_t n = 0;
    TRY(cdm_list_count(found, &n));
    cdm_object *olga = NULL;
    if (n == 1) TRY(cdm_list_object_at(found, 0, &olga));
    const char *entity = NULL, *sort = NULL;
    if (olga) {
        TRY(cdm_object_entity_name(olga, &entity));
        TRY(cdm_object_get_text(olga, "sortName", &sort, NULL, NULL));
    }
    p->begin_ok = pass == 1 && genres == 4 && n == 1 && entity && !strcmp(entity, "Translator") && sort && !strcmp(sort, "Ortiz, Olga");
    return CDM_OK;
}

static int lookup(cdm_context *ctx, cdm_object *source_instance, cdm_object **out) {
    id_map *map = NULL;
    const char *uri = NULL;
    TRY(cdm_context_get_user_info(ctx, "idmap", (void **)&map));
    if (!map) return cdm_context_fail(ctx, CDM_ENTITY_MIGRATION_POLICY, "pass 1 left no idmap");
    TRY(cdm_object_uri(source_instance, &uri));
    const char *target = map_get(map, uri);
    if (!target) return cdm_context_fail(ctx, CDM_ENTITY_MIGRATION_POLICY, "an instance pass 1 did not make");
    return cdm_context_instance_for_uri(ctx, target, out);
}

static int link_relationships(cdm_context *ctx, cdm_object *dst, void *user) {
    link_policy *p = user;
    TRY(cdm_context_default_create_relationships(ctx, dst));   /* super: no relationship mappings here */
    cdm_object *const *sources = NULL;
    size_t n = 0;
    TRY(cdm_context_source_instances(ctx, "BookToBook", &dst, 1, &sources, &n));
    if (n != 1) return cdm_context_fail(ctx, CDM_ENTITY_MIGRATION_POLICY, "a book without its source");
    cdm_object *src = sources[0];
    cdm_object *source_genre = NULL, *genre = NULL;
    TRY(cdm_object_get_object(src, "genre", &source_genre));
    if (source_genre) {
        TRY(lookup(ctx, source_genre, &genre));
        TRY(cdm_object_set_object(dst, "genre", genre));
        TRY(cdm_object_insert_object(genre, "books", dst, 0));   /* newest first */
    }
    cdm_object *const *authors = NULL;
    size_t count = 0;
    TRY(cdm_object_get_objects(src, "authors", &authors, &count));
    cdm_object *first_author = NULL;
    for (size_t i = 0; i < count; i++) {
        cdm_object *author = NULL;
        TRY(lookup(ctx, authors[i], &author));
        TRY(cdm_object_add_object(dst, "authors", author));
        if (!first_author) first_author = author;
    }
    const char *title = NULL;
    TRY(cdm_object_get_text(dst, "title", &title, NULL, NULL));
    if (first_author && !strncmp(title, "Withdrawn", 9)) {
        /* Withdrawn books lose their authors, from the author's side. */
        for (size_t i = 0; i < count; i++) {
            cdm_object *author = NULL;
            TRY(lookup(ctx, authors[i], &author));
            TRY(cdm_object_remove_object(author, "books", dst));
        }
        p->removed++;
    }
    p->linked++;
    return CDM_OK;
}

static int link_end(cdm_context *ctx, void *user) {
    link_policy *p = user;
    cdm_list *genres = NULL;
    TRY(cdm_context_fetch_destination(ctx, "Genre", NULL, NULL, 0, 0, 0, &genres));
    cdm_object *const *items = NULL;
    size_t n = 0;
    TRY(cdm_list_objects(genres, &items, &n));
    p->order_ok = n == 4;
    for (size_t g = 0; g < n; g++) {
        cdm_object *const *books = NULL;
        size_t count = 0;
        TRY(cdm_object_get_objects(items[g], "books", &books, &count));
        int64_t last = INT64_MAX;
        for (size_t i = 0; i < count; i++) {
            int64_t pk = 0;
            TRY(cdm_object_id(books[i], NULL, NULL, &pk));
            if (pk >= last) p->order_ok = 0;
            last = pk;
            p->order_checked++;
        }
    }
    return CDM_OK;
}

/* ------------------------------------------------------------------------------------------ */

static cdm_migration *migration(const char *from, const char *to, const char *const *mappings, size_t count) {
    cdm_model *a = NULL, *b = NULL;
    cdm_mapping *maps[2] = {NULL, NULL};
    CHECK_RC(cdm_model_from_json(from, &a), CDM_OK);
    CHECK_RC(cdm_model_from_json(to, &b), CDM_OK);
    for (size_t i = 0; i < count; i++) {
        CHECK_RC(cdm_mapping_from_json(mappings[i], &maps[i]), CDM_OK);
        if (cdm_mapping_errcode(maps[i])) fprintf(stderr, "  %s\n", cdm_mapping_errmsg(maps[i]));
    }
    cdm_migration *m = NULL;
    int rc = cdm_migration_new(a, b, maps, count, &m);
    CHECK(rc == CDM_OK);
    if (rc) fprintf(stderr, "  %s\n", cdm_migration_errmsg(m));
    cdm_model_free(a);
    cdm_model_free(b);
    for (size_t i = 0; i < count; i++) cdm_mapping_free(maps[i]);
    return m;
}

static int configured_destroyed;
static void count_configured(void *p) { (void)p; configured_destroyed++; }

static void check_v3(const char *path) {
    sqlite3 *db = NULL;
    CHECK(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    sqlite3_stmt *st = NULL;
    CHECK(sqlite3_prepare_v2(db,
        "SELECT b.ZISBN, b.ZTITLE, b.ZYEAR, b.ZPRICE, g.ZNAME, g.ZCODE, "
        "  (SELECT group_concat(name, '|') FROM (SELECT a.ZNAME AS name FROM Z_1BOOKS j JOIN ZAUTHOR a ON a.Z_PK = j.Z_1AUTHORS "
        "    WHERE j.Z_3BOOKS = b.Z_PK ORDER BY a.ZNAME)) "
        "FROM ZBOOK b LEFT JOIN ZGENRE g ON g.Z_PK = b.ZGENRE ORDER BY b.ZISBN", -1, &st, NULL) == SQLITE_OK);
    if (!st) fprintf(stderr, "  %s\n", sqlite3_errmsg(db));
    int row = 0;
    while (st && sqlite3_step(st) == SQLITE_ROW) {
        int i = row;
        char isbn[32], title[64], genre[32] = "", code[4] = {0}, authors[160] = "";
        snprintf(isbn, sizeof isbn, "978-%06d", i);
        snprintf(title, sizeof title, "%sBook %d", withdrawn(i) ? "Withdrawn " : "", i);
        const char *raw = RAW_GENRES[i % RAW_GENRE_COUNT];
        if (raw) normalize_genre(raw, strlen(raw), genre, sizeof genre);
        for (int c = 0; c < 3 && genre[c]; c++) code[c] = (char)toupper((unsigned char)genre[c]);
        if (!withdrawn(i)) {
            int a0 = book_author(i, 0), a1 = book_author(i, 1);
            char n0[64], n1[64];
            snprintf(n0, sizeof n0, "%s %s", FIRST[a0], LAST[a0]);
            snprintf(n1, sizeof n1, "%s %s", FIRST[a1], LAST[a1]);
            if (a0 == a1) snprintf(authors, sizeof authors, "%s", n0);
            else snprintf(authors, sizeof authors, "%s|%s", strcmp(n0, n1) < 0 ? n0 : n1, strcmp(n0, n1) < 0 ? n1 : n0);
        }
        CHECK_STR((const char *)sqlite3_column_text(st, 0), isbn);
        CHECK_STR((const char *)sqlite3_column_text(st, 1), title);
        CHECK(sqlite3_column_int(st, 2) == 1950 + i % 70);
        double price = sqlite3_column_double(st, 3), expected = 5 + i % 20 + 0.99;
        CHECK(price > expected - 1e-9 && price < expected + 1e-9);
        if (*genre) {
            CHECK_STR((const char *)sqlite3_column_text(st, 4), genre);
            CHECK_STR((const char *)sqlite3_column_text(st, 5), code);
        } else {
            CHECK(sqlite3_column_type(st, 4) == SQLITE_NULL);
        }
        if (*authors) CHECK_STR((const char *)sqlite3_column_text(st, 6), authors);
        else CHECK(sqlite3_column_type(st, 6) == SQLITE_NULL);
        row++;
    }
    CHECK(row == BOOKS);
    sqlite3_finalize(st);
    st = NULL;
    CHECK(sqlite3_prepare_v2(db, "SELECT (SELECT COUNT(*) FROM ZGENRE), (SELECT COUNT(*) FROM ZAUTHOR), "
                                 "(SELECT COUNT(*) FROM ZAUTHOR WHERE ZLANGUAGE = 'es'), (SELECT group_concat(ZSORTNAME, '|') FROM ZAUTHOR WHERE Z_PK <= 2), "
                                 "(SELECT COUNT(*) FROM sqlite_master WHERE name LIKE 'cdm_lookup%')", -1, &st, NULL) == SQLITE_OK);
    CHECK(st && sqlite3_step(st) == SQLITE_ROW);
    if (st) {
        CHECK(sqlite3_column_int(st, 0) == 4);
        CHECK(sqlite3_column_int(st, 1) == AUTHORS + TRANSLATORS);
        CHECK(sqlite3_column_int(st, 2) == TRANSLATORS);
        CHECK_STR((const char *)sqlite3_column_text(st, 3), "Alonso, Ana|Benitez, Bruno");
        CHECK(sqlite3_column_int(st, 4) == 0);   /* the lookup indexes are gone */
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
}

static void test_library(void) {
    char *v1 = strdup(path_in_dir("library-v1.sqlite")), *v2 = strdup(path_in_dir("library-v2.sqlite")), *v3 = strdup(path_in_dir("library-v3.sqlite"));
    if (!make_v1(v1)) { failed++; fprintf(stderr, "FAIL: no V1 store\n"); free(v1); free(v2); free(v3); return; }

    /* Step 1. */
    genre_policy gp = {0};
    const char *step1[] = {STEP1};
    cdm_migration *m = migration(LIB_V1, LIB_V2, step1, 1);
    cdm_policy hooks = {0};
    hooks.begin = genre_begin;
    hooks.create_destination_instances = genre_create;
    hooks.create_relationships = genre_relationships;
    CHECK_RC(cdm_migration_register_policy(m, "GenrePolicy", &hooks, sizeof hooks, &gp, NULL), CDM_OK);
    /* Configuration set before the run is released when it ends. */
    configured_destroyed = 0;
    static int token;
    void *got = NULL;
    CHECK_RC(cdm_migration_set_user_info(m, "config", &token, count_configured), CDM_OK);
    CHECK_RC(cdm_migration_get_user_info(m, "config", &got), CDM_OK);
    CHECK(got == &token);
    CHECK_RC(cdm_migration_get_user_info(m, "absent", &got), CDM_OK);
    CHECK(got == NULL);
    CHECK_RC(cdm_migration_set_user_info(m, "config", &token, count_configured), CDM_OK);   /* replaced: old destroyed */
    CHECK(configured_destroyed == 1);
    CHECK_RC(cdm_migration_set_user_info(m, NULL, &token, count_configured), CDM_MISUSE);     /* destroyed at once */
    CHECK(configured_destroyed == 2);
    CHECK_RC(cdm_migration_set_user_info(NULL, "k", &token, count_configured), CDM_MISUSE);
    CHECK(configured_destroyed == 3);
    CHECK_RC(cdm_migration_get_user_info(m, "config", NULL), CDM_MISUSE);
    int rc = cdm_migration_run(m, v1, v2);
    CHECK(rc == CDM_OK);
    if (rc) fprintf(stderr, "  step 1: %s\n", cdm_migration_errmsg(m));
    CHECK(configured_destroyed == 4);
    CHECK_RC(cdm_migration_get_user_info(m, "config", &got), CDM_OK);
    CHECK(got == NULL);
    CHECK(gp.model_version == 2 && gp.books == BOOKS);
    CHECK(gp.genres_made == 4);                          /* fiction, history, science, poetry */
    CHECK(gp.fetches == BOOKS - BOOKS / RAW_GENRE_COUNT - (BOOKS % RAW_GENRE_COUNT > 7));
    cdm_migration_free(m);

    /* Step 2: two mapping models, two passes. */
    remember_policy rp = {0};
    link_policy lp = {0};
    const char *step2[] = {STEP2_PASS1, STEP2_PASS2};
    m = migration(LIB_V2, LIB_V3, step2, 2);
    cdm_policy remember_hooks = {0}, link_hooks = {0};
    remember_hooks.create_destination_instances = remember_create;
    link_hooks.begin = link_begin;
    link_hooks.create_relationships = link_relationships;
    link_hooks.end = link_end;
    CHECK_RC(cdm_migration_register_policy(m, "RememberPolicy", &remember_hooks, sizeof remember_hooks, &rp, NULL), CDM_OK);
    CHECK_RC(cdm_migration_register_policy(m, "LinkPolicy", &link_hooks, sizeof link_hooks, &lp, NULL), CDM_OK);
    rc = cdm_migration_run(m, v2, v3);
    CHECK(rc == CDM_OK);
    if (rc) fprintf(stderr, "  step 2: %s\n", cdm_migration_errmsg(m));
    CHECK(rp.made == 4 + AUTHORS + TRANSLATORS && rp.super_calls == AUTHORS + TRANSLATORS);
    CHECK(rp.map_destroyed == 1);                        /* released when the migration ended */
    CHECK(lp.begin_ok);
    CHECK(lp.linked == BOOKS && lp.removed == (BOOKS + 16) / 17);
    CHECK(lp.order_ok && lp.order_checked == BOOKS - BOOKS / RAW_GENRE_COUNT - (BOOKS % RAW_GENRE_COUNT > 7));
    cdm_migration_free(m);
    check_v3(v3);
    free(v1); free(v2); free(v3);
}

/* A policy error from a query aborts the migration like any other, naming the culprit. */
static int bad_fetch(cdm_context *ctx, cdm_object *src, void *user) {
    (void)src; (void)user;
    cdm_list *list = NULL;
    return cdm_context_fetch_source(ctx, "Book", "nmae == 'x'", NULL, 0, 0, 0, &list);
}

static int user_info_then_fail(cdm_context *ctx, void *user) {
    static int token;
    int rc = cdm_context_set_user_info(ctx, "left", &token, count_configured);
    (void)user;
    return rc ? rc : cdm_context_fail(ctx, 77, "stop after setting user info");
}

static void test_failures(void) {
    char *v1 = strdup(path_in_dir("failing-v1.sqlite"));
    if (!make_v1(v1)) { failed++; free(v1); return; }
    const char *step1[] = {STEP1};
    cdm_migration *m = migration(LIB_V1, LIB_V2, step1, 1);
    cdm_policy hooks = {0};
    hooks.create_destination_instances = bad_fetch;
    CHECK_RC(cdm_migration_register_policy(m, "GenrePolicy", &hooks, sizeof hooks, NULL, NULL), CDM_OK);
    int rc = cdm_migration_run(m, v1, path_in_dir("failing-v2.sqlite"));
    CHECK(rc != CDM_OK);
    CHECK_HAS(cdm_migration_errmsg(m), "nmae");
    CHECK(access(path_in_dir("failing-v2.sqlite"), F_OK) != 0);
    /* A host pointer set by a hook of a failing run is released too. */
    cdm_policy failing = {0};
    failing.begin = user_info_then_fail;
    CHECK_RC(cdm_migration_register_policy(m, "GenrePolicy", &failing, sizeof failing, NULL, NULL), CDM_OK);
    configured_destroyed = 0;
    CHECK_RC(cdm_migration_run(m, v1, path_in_dir("failing-v2.sqlite")), 77);
    CHECK(configured_destroyed == 1);
    cdm_migration_free(m);
    free(v1);
}

/* Handles made by the new calls go stale with their callback. */
static cdm_list *kept_list;
static cdm_context *kept_ctx;
static int keep_list(cdm_context *ctx, void *user) {
    (void)user;
    kept_ctx = ctx;
    return cdm_context_fetch_source(ctx, "Book", NULL, NULL, 0, 0, 2, &kept_list);
}

static void test_stale(void) {
    char *v1 = strdup(path_in_dir("stale-v1.sqlite"));
    if (!make_v1(v1)) { failed++; free(v1); return; }
    const char *step1[] = {STEP1};
    cdm_migration *m = migration(LIB_V1, LIB_V2, step1, 1);
    cdm_policy hooks = {0};
    hooks.begin = keep_list;
    CHECK_RC(cdm_migration_register_policy(m, "GenrePolicy", &hooks, sizeof hooks, NULL, NULL), CDM_OK);
    CHECK_RC(cdm_migration_run(m, v1, path_in_dir("stale-v2.sqlite")), CDM_OK);
    size_t n = 0;
    CHECK_RC(cdm_list_count(kept_list, &n), CDM_MISUSE);
    CHECK_HAS(cdm_last_errmsg(), "no longer valid");
    static int token;
    configured_destroyed = 0;
    CHECK_RC(cdm_context_set_user_info(kept_ctx, "k", &token, count_configured), CDM_MISUSE);
    CHECK(configured_destroyed == 1);
    void *got = NULL;
    CHECK_RC(cdm_context_get_user_info(kept_ctx, "k", &got), CDM_MISUSE);
    CHECK_RC(cdm_context_fetch_destination(kept_ctx, "Book", NULL, NULL, 0, 0, 0, &kept_list), CDM_MISUSE);
    CHECK_RC(cdm_context_default_create_relationships(kept_ctx, NULL), CDM_MISUSE);
    cdm_migration_free(m);
    free(v1);
}

int main(void) {
    if (!scratch_begin("library-test")) return 2;
    CHECK(cdm_internal_struct_size("cdm_field") == sizeof(cdm_field));
    CHECK(cdm_internal_struct_size("cdm_attribute_info") == sizeof(cdm_attribute_info));
    CHECK(cdm_internal_struct_size("cdm_relationship_info") == sizeof(cdm_relationship_info));
    CHECK(cdm_internal_struct_size("cdm_policy") == sizeof(cdm_policy));
    CHECK(cdm_internal_struct_size("cdm_progress") == sizeof(cdm_progress));
    CHECK(cdm_internal_struct_size("nope") == 0);
    test_library();
    test_failures();
    test_stale();
    return scratch_end("");
}
