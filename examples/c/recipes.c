/* Scenario 2 in C: Apple's MigrationV2 recipes sample. The host functions getFirstName: and
** getLastName: (FUNCTION(CAST("MigrationFunctions", "Class"), …) in the mapping) are C functions;
** RecipeToCuisineMigrationPolicy makes one Cuisine per distinct string. Where the Swift policy
** keeps a dictionary, this one asks the destination (cdm_context_fetch_destination), which also
** finds the cuisines made earlier in the same pass that are not yet written. */
#include "example.h"
#include "unicode_text.h"

#define CHEFS 20
#define INGREDIENTS 90
#define RECIPES 300
static const char *CHEF_NAMES[CHEFS] = {"Juan Mari Arzak", "Ferran Adrià", "Madonna", "", "山田　太郎", NULL, "Elena Arzak Espina",
    "Carme Ruscalleda", "Joan Roca", "Martín Berasategui", "Dabiz", "Quique Dacosta", "鈴木　一郎", "Ángel León", "Paco Roncero",
    "Pedro Subijana", "Andoni Luis Aduriz", "Mugaritz", "Jordi  Cruz", "Begoña Rodrigo"};
static const char *CUISINES[9] = {"vasca", "catalana", "andaluza", "gallega", "mediterránea", "creativa", "francesa", "italiana", "和食"};
static const char *FOODS[] = {"tomate", "ajo", "cebolla", "pimiento", "bacalao", "merluza", "arroz", "azafrán", "aceite", "sal",
                              "豆腐", "味噌", "醤油", "patata", "huevo", "chorizo", "garbanzo", "espinaca"};

static struct { int chef; const char *cuisine; int ingredients[6]; int count; } recipe[RECIPES];

/* The name trimmed of white space, split at its first run of white space (Unicode White_Space, as
** in Swift and Python): "Juan Mari Arzak" → "Juan" / "Mari Arzak"; "  Gordon   Ramsay " → "Gordon" /
** "Ramsay"; "山田　太郎" → "山田" / "太郎". Returns the byte length of the white space at s[i] (0: none). */
static size_t space_at(const char *s, size_t length, size_t i) {
    size_t size;
    return i < length && text_is_white_space(text_decode((const unsigned char *)s + i, length - i, &size)) ? size : 0;
}
static size_t next_at(const char *s, size_t length, size_t i) {
    size_t size;
    text_decode((const unsigned char *)s + i, length - i, &size);
    return i + size;
}
static void split_name(const char *name, char *first, char *last, size_t size) {
    size_t length = strlen(name), start = 0, end = 0, gap, rest, n;
    while ((n = space_at(name, length, start))) start += n;
    for (size_t i = start; i < length; i = next_at(name, length, i))   /* end: after the last non-space */
        if (!space_at(name, length, i)) end = next_at(name, length, i);
    if (end < start) end = start;
    for (gap = start; gap < end && !space_at(name, length, gap); gap = next_at(name, length, gap)) {}
    for (rest = gap; rest < end && (n = space_at(name, length, rest)); rest += n) {}
    snprintf(first, size, "%.*s", (int)(gap - start), name + start);
    snprintf(last, size, "%.*s", (int)(end - rest), name + rest);
}

static void generate(const char *path) {
    cdm_model *model = load_model("2-recipes/RecipesV1.model.json");
    cdm_store *store = NULL;
    MUST(cdm_store_create(model, path, &store));
    rng r = {42};
    cdm_object *chefs[CHEFS], *ingredients[INGREDIENTS];
    for (int i = 0; i < CHEFS; i++) {
        MUST(cdm_store_insert(store, "Chef", &chefs[i]));
        if (CHEF_NAMES[i]) MUST(cdm_object_set_text(chefs[i], "name", CHEF_NAMES[i], CDM_NUL_TERMINATED));
        MUST(cdm_object_set_text(chefs[i], "training", i % 2 ? "Escuela de Hostelería" : "autodidacta", CDM_NUL_TERMINATED));
    }
    for (int i = 0; i < INGREDIENTS; i++) {
        char name[64], amount[32];
        snprintf(name, sizeof name, "%s %d", FOODS[i % 18], i / 18);
        snprintf(amount, sizeof amount, "%d g", 10 * (1 + rng_below(&r, 50)));
        MUST(cdm_store_insert(store, "Ingredient", &ingredients[i]));
        cdm_field fields[2] = {cdm_field_text("name", name), cdm_field_text("amount", amount)};
        MUST(cdm_object_set_fields(ingredients[i], fields, 2, 0));
    }
    for (int i = 0; i < RECIPES; i++) {
        char name[64], directions[128];
        snprintf(name, sizeof name, "Receta %d", i);
        snprintf(directions, sizeof directions, "Paso 1: preparar. Paso 2: cocinar %d minutos.", 5 + rng_below(&r, 90));
        cdm_object *o = NULL;
        MUST(cdm_store_insert(store, "Recipe", &o));
        int roll = rng_below(&r, 100);
        recipe[i].cuisine = roll < 5 ? NULL : roll < 10 ? "" : CUISINES[rng_below(&r, 9)];
        recipe[i].chef = rng_below(&r, 100) < 8 ? -1 : rng_below(&r, CHEFS);
        cdm_field fields[3] = {cdm_field_text("name", name), cdm_field_text("directions", directions),
                               recipe[i].cuisine ? cdm_field_text("cuisine", recipe[i].cuisine) : cdm_field_null("cuisine")};
        MUST(cdm_object_set_fields(o, fields, 3, 0));
        if (recipe[i].chef >= 0) MUST(cdm_object_set_object(o, "chef", chefs[recipe[i].chef]));
        recipe[i].count = 1 + rng_below(&r, 6);
        for (int k = 0; k < recipe[i].count; k++) {
            int pick;
            int fresh;
            do {   /* distinct ingredients */
                pick = rng_below(&r, INGREDIENTS);
                fresh = 1;
                for (int j = 0; j < k; j++) fresh &= recipe[i].ingredients[j] != pick;
            } while (!fresh);
            recipe[i].ingredients[k] = pick;
            MUST(cdm_object_add_object(o, "ingredients", ingredients[pick]));
        }
        cdm_object_release(o);
    }
    MUST(cdm_store_save(store));
    cdm_store_close(store);
    cdm_model_free(model);
}

/* MigrationFunctions getFirstName: / getLastName: — `user` says which half. */
static int name_part(cdm_context *ctx, int argc, cdm_value *const *argv, cdm_value *result, void *user) {
    if (argc != 1) return cdm_context_fail(ctx, CDM_EXPRESSION_EVALUATION, "getFirstName:/getLastName: take one name");
    if (cdm_value_type(argv[0]) == CDM_VALUE_NULL) return cdm_value_set_null(result);
    const char *name = NULL;
    TRY(cdm_value_text(argv[0], &name, NULL));
    char first[512], last[512];
    split_name(name, first, last, sizeof first);
    return cdm_value_set_text(result, user ? last : first, CDM_NUL_TERMINATED);
}

/* RecipeToCuisineMigrationPolicy: one Cuisine per distinct non-empty string; every other recipe of
** that cuisine is associated with the same instance. A Cuisine thus has several sources, which the
** default relationship stage refuses (134110, as Core Data), so cuisine_relationships sets recipes. */
static int cuisine_create(cdm_context *ctx, cdm_object *source, void *user) {
    (void)user;
    const char *text = NULL; size_t length = 0; int is_null = 0;
    TRY(cdm_object_get_text(source, "cuisine", &text, &length, &is_null));
    if (is_null || length == 0) return CDM_OK;
    char *name = text_nfc(text, length);   /* names are NFC, compared and stored (as Swift and Python) */
    if (!name) return cdm_context_fail(ctx, CDM_ENTITY_MIGRATION_POLICY, "out of memory");
    cdm_field argument = cdm_field_text(NULL, name);
    cdm_list *found = NULL;
    size_t count = 0;
    cdm_object *cuisine = NULL;
    int rc = cdm_context_fetch_destination(ctx, "Cuisine", "name == %@", &argument, 1, 0, 1, &found);
    if (rc == CDM_OK) rc = cdm_list_count(found, &count);
    if (rc == CDM_OK && count == 0) {   /* super, then the NFC name */
        rc = cdm_context_default_create_destination_instances(ctx, source, &cuisine);
        if (rc == CDM_OK && cuisine) rc = cdm_object_set_text(cuisine, "name", name, CDM_NUL_TERMINATED);
    } else if (rc == CDM_OK) {
        rc = cdm_list_object_at(found, 0, &cuisine);
        if (rc == CDM_OK) rc = cdm_context_associate(ctx, source, cuisine);
    }
    free(name);
    return rc;
}

/* The Cuisine's recipes: the RecipeToRecipe destinations of all the recipes it was made from. */
static int cuisine_relationships(cdm_context *ctx, cdm_object *cuisine, void *user) {
    (void)user;
    cdm_object *const *recipes = NULL, *const *migrated = NULL;
    size_t recipe_count = 0, migrated_count = 0;
    TRY(cdm_context_source_instances(ctx, "RecipeToCuisine", &cuisine, 1, &recipes, &recipe_count));
    TRY(cdm_context_destination_instances(ctx, "RecipeToRecipe", recipes, recipe_count, &migrated, &migrated_count));
    for (size_t i = 0; i < migrated_count; i++) TRY(cdm_object_add_object(cuisine, "recipes", migrated[i]));
    return CDM_OK;
}

static void check(const char *path) {
    sqlite3 *db = open_result(path);
    /* Chefs: names split, training gone. */
    sqlite3_stmt *st = query(db, "SELECT ZFIRSTNAME, ZLASTNAME FROM ZCHEF ORDER BY Z_PK");
    int row = 0;
    while (st && sqlite3_step(st) == SQLITE_ROW && row < CHEFS) {
        char first[128], last[128];
        if (CHEF_NAMES[row]) {
            split_name(CHEF_NAMES[row], first, last, sizeof first);
            CHECK_STR(column_text(st, 0), first);
            CHECK_STR(column_text(st, 1), last);
        } else {
            CHECK(sqlite3_column_type(st, 0) == SQLITE_NULL && sqlite3_column_type(st, 1) == SQLITE_NULL);
        }
        row++;
    }
    CHECK(row == CHEFS);
    sqlite3_finalize(st);
    char first[128], last[128];
    split_name("Juan Mari Arzak", first, last, sizeof first);
    CHECK_STR(first, "Juan");
    CHECK_STR(last, "Mari Arzak");
    split_name("山田　太郎", first, last, sizeof first);
    CHECK_STR(first, "山田");
    CHECK_STR(last, "太郎");
    split_name("  Gordon \t Ramsay ", first, last, sizeof first);
    CHECK_STR(first, "Gordon");
    CHECK_STR(last, "Ramsay");
    split_name(" \xe3\x80\x80 ", first, last, sizeof first);
    CHECK_STR(first, "");
    CHECK_STR(last, "");
    /* Recipes: attributes, chef, exactly its cuisine, exactly its ingredients; rating empty. */
    st = query(db,
        "SELECT r.ZNAME, r.ZRATING, c.Z_PK, "
        " (SELECT group_concat(k.ZNAME, '|') FROM Z_2RECIPES j JOIN ZCUISINE k ON k.Z_PK = j.Z_2CUISINES WHERE j.Z_4RECIPES = r.Z_PK), "
        " (SELECT group_concat(name, '|') FROM (SELECT i.ZNAME AS name FROM Z_3RECIPES j JOIN ZINGREDIENT i ON i.Z_PK = j.Z_3INGREDIENTS "
        "   WHERE j.Z_4RECIPES = r.Z_PK ORDER BY i.Z_PK)) "
        "FROM ZRECIPE r LEFT JOIN ZCHEF c ON c.Z_PK = r.ZCHEF ORDER BY r.Z_PK");
    row = 0;
    while (st && sqlite3_step(st) == SQLITE_ROW && row < RECIPES) {
        char name[64], expected[512] = "";
        snprintf(name, sizeof name, "Receta %d", row);
        CHECK_STR(column_text(st, 0), name);
        CHECK(sqlite3_column_type(st, 1) == SQLITE_NULL);
        if (recipe[row].chef < 0) CHECK(sqlite3_column_type(st, 2) == SQLITE_NULL);
        else CHECK(sqlite3_column_int(st, 2) == recipe[row].chef + 1);
        CHECK_STR(column_text(st, 3), recipe[row].cuisine && *recipe[row].cuisine ? recipe[row].cuisine : NULL);
        int sorted[6], n = recipe[row].count;
        memcpy(sorted, recipe[row].ingredients, sizeof sorted);
        for (int a = 0; a < n; a++) for (int b = a + 1; b < n; b++) if (sorted[b] < sorted[a]) { int t = sorted[a]; sorted[a] = sorted[b]; sorted[b] = t; }
        for (int k = 0; k < n; k++) {
            size_t used = strlen(expected);
            snprintf(expected + used, sizeof expected - used, "%s%s %d", k ? "|" : "", FOODS[sorted[k] % 18], sorted[k] / 18);
        }
        CHECK_STR(column_text(st, 4), expected);
        row++;
    }
    CHECK(row == RECIPES);
    sqlite3_finalize(st);
    /* One Cuisine per distinct string, each with exactly its recipes. */
    int distinct = 0;
    for (int c = 0; c < 9; c++) {
        int expected = 0;
        for (int i = 0; i < RECIPES; i++) expected += recipe[i].cuisine && !strcmp(recipe[i].cuisine, CUISINES[c]);
        distinct += expected > 0;
        char sql[256];
        snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM Z_2RECIPES j JOIN ZCUISINE k ON k.Z_PK = j.Z_2CUISINES WHERE k.ZNAME = '%s'", CUISINES[c]);
        CHECK(scalar(db, sql) == expected);
    }
    CHECK(scalar(db, "SELECT COUNT(*) FROM ZCUISINE") == distinct);
    CHECK(scalar(db, "SELECT COUNT(*) FROM ZINGREDIENT") == INGREDIENTS);
    int with_chef = 0;
    for (int i = 0; i < RECIPES; i++) with_chef += recipe[i].chef >= 0;
    CHECK(scalar(db, "SELECT COUNT(*) FROM ZRECIPE WHERE ZCHEF IS NOT NULL") == with_chef);
    sqlite3_close(db);
}

int main(int argc, char **argv) {
    const char *source, *destination;
    int given = source_mode(argc, argv, &source, &destination);
    const char *mappings[] = {"2-recipes/RecipesV1ToV2.mapping.json"};
    cdm_migration *migration = load_migration("2-recipes/RecipesV1.model.json", "2-recipes/RecipesV2.model.json", mappings, 1);
    static int last_half = 1;
    MUST(cdm_migration_register_function(migration, "MigrationFunctions", "getFirstName:", name_part, NULL, NULL));
    MUST(cdm_migration_register_function(migration, "MigrationFunctions", "getLastName:", name_part, &last_half, NULL));
    cdm_policy hooks = {0};
    hooks.create_destination_instances = cuisine_create;
    hooks.create_relationships = cuisine_relationships;
    MUST(cdm_migration_register_policy(migration, "RecipeToCuisineMigrationPolicy", &hooks, sizeof hooks, NULL, NULL));
    if (given) {
        int status = source_mode_status(cdm_migration_run(migration, source, destination), migration);
        cdm_migration_free(migration);
        return status;
    }
    example_begin();
    source = store_path("Recipes.sqlite");
    destination = store_path("Recipes-v2.sqlite");
    generate(source);
    if (run_migration(migration, source, destination) == CDM_OK) check(destination);
    cdm_migration_free(migration);
    return example_end("2 recipes");
}
