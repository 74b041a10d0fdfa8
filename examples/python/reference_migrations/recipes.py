"""Scenario 2: Apple's MigrationV2 sample — chefs' names split by host functions
(getFirstName:/getLastName:), cuisines become entities, relationships re-pointed."""

from __future__ import annotations

import os

import cdmigrate

from .common import SeededGenerator, mapping, model, summary
from .text import is_white_space, nfc

DIRECTORY = "2-recipes"
CUISINE_NAMES = ["Japanese", "French", "Italian", "Mexican", "Thai", "Indian", "Spanish", "和食", "Peruvian"]
#: One-word, two-word, multi-word, empty and Japanese (ideographic space) names, and a chef with no name.
CHEF_NAMES: list[str | None] = [
    "Jiro Ono",
    "Nobu Matsuhisa",
    "Julia Child",
    "Alain Ducasse",
    "Juan Mari Arzak",
    "Elena Arzak Espina",
    "Ferran Adrià",
    "Massimo Bottura",
    "Gastón Acurio",
    "Madonna",
    "Nigella",
    "",
    "山田　太郎",
    "小野 二郎",
    "Marie-Antoine Carême",
    "Auguste Escoffier",
    "  Gordon   Ramsay ",
    "Yotam Ottolenghi",
    "Dominique Crenn",
    None,
]


def split_name(name: str) -> tuple[str, str]:
    """The name trimmed of white space, split at its first run of white space (code points with
    Unicode's White_Space property: ASCII space, tab, line breaks, no-break space, U+3000 …), as
    in Swift and C: "Juan Mari Arzak" → ("Juan", "Mari Arzak"); "  Gordon   Ramsay " →
    ("Gordon", "Ramsay"); "Madonna" → ("Madonna", ""); "" → ("", "")."""
    start, end = 0, len(name)
    while start < end and is_white_space(name[start]):
        start += 1
    while end > start and is_white_space(name[end - 1]):
        end -= 1
    gap = start
    while gap < end and not is_white_space(name[gap]):
        gap += 1
    rest = gap
    while rest < end and is_white_space(name[rest]):
        rest += 1
    return name[start:gap], name[rest:end]


def get_first_name(name: str | None) -> str | None:
    """MigrationFunctions getFirstName: (nil stays nil)."""
    return None if name is None else split_name(name)[0]


def get_last_name(name: str | None) -> str | None:
    """MigrationFunctions getLastName:"""
    return None if name is None else split_name(name)[1]


FUNCTIONS = {
    ("MigrationFunctions", "getFirstName:"): get_first_name,
    ("MigrationFunctions", "getLastName:"): get_last_name,
}


class RecipeToCuisineMigrationPolicy(cdmigrate.EntityMigrationPolicy):
    """RecipeToCuisine (source Recipe, destination Cuisine): one Cuisine per distinct string. The
    first recipe of a cuisine makes it with the default behaviour (``super()``: the mapping's own
    ``name = $source.cuisine``); later recipes find it with a destination fetch and are only
    associated with it. A Cuisine thus has several sources, which Core Data's default relationship
    stage refuses (134110), so the policy sets ``recipes`` itself: the RecipeToRecipe destinations of
    all its source recipes. A recipe without a cuisine (nil or empty) makes none. Cuisine names are
    NFC, compared and stored (as in Swift and C)."""

    def create_destination_instances(self, source, mapping, manager):
        name = source["cuisine"]
        if not name:
            return None
        name = nfc(name)
        found = manager.fetch_destination("Cuisine", "name == %@", name, limit=1)
        if found:
            manager.associate(source, found[0])
            return found[0]
        cuisine = super().create_destination_instances(source, mapping, manager)
        if cuisine is not None:
            cuisine["name"] = name
        return cuisine

    def create_relationships(self, destination, mapping, manager):
        recipes = manager.source_instances(mapping.name, [destination])
        destination.add("recipes", *manager.destination_instances("RecipeToRecipe", recipes))


POLICIES = {"RecipeToCuisineMigrationPolicy": RecipeToCuisineMigrationPolicy}

TRAININGS = [
    "Le Cordon Bleu",
    "Tsuji Culinary Institute",
    "self-taught",
    "apprenticeship",
    "Basque Culinary Center",
    None,
]
FOODS = [
    "醤油",
    "味噌",
    "rice",
    "nori",
    "salmon",
    "tofu",
    "butter",
    "shallot",
    "garlic",
    "tomato",
    "basil",
    "chili",
    "lime",
    "coriander",
    "saffron",
    "olive oil",
    "egg",
    "flour",
    "dashi",
    "mirin",
    "ginger",
    "leek",
    "potato",
    "corn",
]
UNITS = ["1 tbsp", "2 tsp", "200 g", "1 cup", "3", "a pinch", "大さじ2", "50 ml", "1 kg", "½ cup"]
DISHES = ["soup", "stew", "salad", "risotto", "tart", "curry", "丼", "ceviche", "tacos", "paella", "gratin", "ramen"]


def generate_source(path: str, ingredients: int = 90, recipes: int = 300, seed: int = 2) -> None:
    random = SeededGenerator(seed)
    with model(DIRECTORY, "RecipesV1.model.json") as v1, cdmigrate.Store.create(v1, path) as store:
        chefs = []
        for name in CHEF_NAMES:
            chef = store.insert("Chef")
            if name is not None:
                chef["name"] = name
            training = random.pick(TRAININGS)
            if training is not None:
                chef["training"] = training
            chefs.append(chef)
        made = []
        for i in range(ingredients):
            suffix = "" if i < len(FOODS) else f" #{i // len(FOODS) + 1}"
            made.append(store.insert("Ingredient", name=f"{FOODS[i % len(FOODS)]}{suffix}", amount=random.pick(UNITS)))
        for i in range(recipes):
            recipe = store.insert(
                "Recipe",
                name=f"Recipe {i + 1}: {random.pick(FOODS)} {random.pick(DISHES)}",
                directions=f"Step 1: prepare. Step {random.int(2, 9)}: serve.",
            )
            roll = random.unit()
            if roll < 0.9:
                recipe["cuisine"] = random.pick(CUISINE_NAMES)
            elif roll < 0.95:
                recipe["cuisine"] = ""
            if random.chance(0.92):
                recipe["chef"] = random.pick(chefs)
            chosen = []
            for _ in range(random.int(1, 6)):
                ingredient = random.pick(made)
                if not any(ingredient is c for c in chosen):
                    chosen.append(ingredient)
            recipe.add("ingredients", *chosen)
        store.save()


def migrate(source: str, destination: str) -> cdmigrate.MigrationReport:
    with model(DIRECTORY, "RecipesV1.model.json") as v1, model(DIRECTORY, "RecipesV2.model.json") as v2, mapping(
        DIRECTORY, "RecipesV1ToV2.mapping.json"
    ) as recipes, cdmigrate.Migration(v1, v2, recipes) as migration:
        return migration.run(source, destination, policies=POLICIES, functions=FUNCTIONS)


def run(directory: str) -> str:
    source = os.path.join(directory, "Recipes-v1.sqlite")
    generate_source(source)
    report = migrate(source, os.path.join(directory, "Recipes-v2.sqlite"))
    return summary(2, "Recipes: Apple's MigrationV2 sample", [report])
