/*
** cdmigrate.h — the C interface of cdmigrate: Core Data's heavyweight migration (mapping models,
** NSEntityMigrationPolicy, NSMigrationManager) for SQLite stores in Core Data's layout.
**
** Conventions (read these once; every function follows them):
**
**  - Objects are opaque handles: cdm_model, cdm_mapping, cdm_migration, cdm_store (long-lived,
**    made and freed by the host) and cdm_context, cdm_object, cdm_value (short-lived, handed to
**    callbacks by the library; never freed by the host; a cdm_object may be kept for the rest of
**    its migration run with cdm_object_retain).
**  - Functions are named cdm_<object>_<verb>. Nearly all return an int result code (CDM_OK, 0, on
**    success; see enum cdm_result). Outputs go through pointer arguments.
**  - Constructors (cdm_model_from_json, cdm_mapping_from_file, cdm_migration_new, cdm_store_create)
**    behave like sqlite3_open: unless `out` is NULL they always store a handle in *out, also on
**    failure, so that the errors can be read from it (cdm_model_errmsg, cdm_model_error). The
**    host frees that handle in every case. A handle whose construction failed can only be asked
**    for its errors and freed; any other use gives CDM_MISUSE.
**  - Every handle keeps the error of its last failed call: cdm_<object>_errcode, cdm_<object>_errmsg
**    and cdm_<object>_error (a structured cdm_error with the JSON path, expression offset and the
**    individual problems of a validation). Errors of cdm_object_* and cdm_value_* calls are kept
**    by the cdm_context (or cdm_store) the object came from. Every failed call also becomes the
**    calling thread's last error (cdm_last_errmsg), which is where errors about NULL or stale
**    handles go. Error strings are owned by the library and valid until the next failing call on
**    the same handle (or, for cdm_last_*, the next failing call on the same thread).
**  - Strings passed in are NUL-terminated UTF-8 (or, where a length comes with them, that many
**    bytes; CDM_NUL_TERMINATED as the length means up to the NUL); invalid UTF-8 gives
**    CDM_ENCODING. Strings handed out are NUL-terminated UTF-8 owned by the library unless the
**    function says "caller frees with cdm_free". JSON is handed out as such text too: no
**    third-party type (a JSON library's value, …) crosses this interface. What plain C reads in
**    bulk comes as C arrays, never only as JSON: keys as int64_t arrays, a text column as an
**    array of texts with their lengths (cdm_batch_column_text), so a C host needs no JSON parser.
**  - Types, decided once for the whole interface:
**      size_t   every length (bytes of text or blobs), count, capacity and position in a sequence
**               (the i of cdm_<object>_<thing>_at and cdm_error_at, list and array indexes).
**      int      an attribute index (cdm_model_attribute_index; -1 for none in cdm_field.index), as
**               SQLite's column indexes; the argc of a host function, as SQLite's functions; an
**               error offset (cdm_error_offset, UTF-8 bytes, -1 for none), as sqlite3_error_offset;
**               result codes, booleans (0/1) and the numbers of a model (min_count, max_count).
**      int64_t  stored integers and primary keys.
**      enum     a parameter taking one value of an enum is declared with the enum type (enum
**               cdm_store_kind, enum cdm_property_kind); flags (a set of enum values or-ed
**               together) and out-parameters are int.
**  - Indexed access is named cdm_<object>_<thing>_at(object, …, size_t i, …) with a
**    cdm_<object>_<thing>_count beside it; CDM_NOTFOUND when i is out of range. The *_at getters
**    and setters of instances take an attribute index instead of a name.
**  - Wrong use gives a result code and a message, never a crash: NULL handles and NULL required
**    pointers (CDM_MISUSE), unknown entity/attribute/mapping names (CDM_NOTFOUND), a getter or
**    setter of the wrong type (CDM_MISMATCH), a short-lived handle used after its callback
**    returned, or a retained one after its release or the end of its run (CDM_MISUSE). Using a
**    long-lived handle after freeing it is undefined, as in C.
**  - Every handle's kind is checked: a handle of another kind (a cdm_mapping passed as a
**    cdm_model, a cdm_object as a cdm_store, a cdm_model as a cdm_object, …) gives CDM_MISUSE
**    with a message naming both kinds ("the model handle is a cdm_mapping, not a cdm_model"),
**    and the *_free functions free nothing when given another kind.
**  - Out-pointers (the pointers a function writes its results to) are required unless the
**    function says one "may be NULL" (is_null and length of the getters, cdm_object_id's,
**    *out of cdm_context_default_create_destination_instances and
**    cdm_context_create_instance_with_fields): a NULL one gives CDM_MISUSE naming it. The
**    handle is checked first, so a bad handle is reported as such.
**
** Threads: cdm_model handles are immutable once made and may be shared by any number of threads
** and migrations. A cdm_mapping may be used by one thread at a time (its last error changes);
** checking it (cdm_mapping_validate, cdm_migration_new) never changes the mapping itself, so one
** mapping may serve migrations between different models. A cdm_migration, a cdm_store, and every cdm_context/cdm_object/cdm_value they
** hand out belong to one thread at a time; callbacks run on the thread that called
** cdm_migration_run, and short-lived handles are valid only on that thread. Separate migrations
** may run in parallel on separate threads.
**
** Linking: see docs/c-api.md (pkg-config --libs cdmigrate, or --static for libcdmigrate.a).
*/
#ifndef CDMIGRATE_H
#define CDMIGRATE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
** Version
*/
/* Generated from the repository's VERSION file by scripts/version.py; do not edit. */
#define CDM_VERSION        "0.1.0"
#define CDM_VERSION_NUMBER 1000
/* CDM_VERSION_NUMBER is major * 1000000 + minor * 1000 + patch. The shared library's SONAME is
** libcdmigrate.so.<major>; its symbols carry the version node CDMIGRATE_<major>. */

/* The library's version, as CDM_VERSION; a static string. */
const char *cdm_libversion(void);
/* The library's version as CDM_VERSION_NUMBER. Compare with the macro to detect a header/library mismatch. */
int cdm_libversion_number(void);
/* The version of the SQLite library in use (sqlite3_libversion()); a static string. */
const char *cdm_sqlite_version(void);

/* Frees memory the library handed out with "caller frees with cdm_free". NULL is harmless. */
void cdm_free(void *pointer);

/* The length of text that ends at its NUL, wherever a function takes a text with a length. */
#define CDM_NUL_TERMINATED ((size_t)-1)

/* ---------------------------------------------------------------------------------------------
** Result codes. Codes below 1000 are cdmigrate's own; the others are Core Data's
** NSCocoaErrorDomain codes, with the same meaning. A host policy may return any other non-zero
** int: the migration stops and cdm_migration_run returns exactly that code.
*/
enum cdm_result {
    CDM_OK = 0,
    CDM_INVALID_JSON = 1,            /* text that is not well-formed JSON */
    CDM_INVALID_MODEL = 2,           /* a data model that fails validation */
    CDM_INVALID_MAPPING = 3,         /* a mapping model that does not fit its models */
    CDM_EXPRESSION_SYNTAX = 4,       /* a value expression or predicate that does not parse */
    CDM_EXPRESSION_EVALUATION = 5,   /* an expression that fails when evaluated */
    CDM_INVALID_ARGUMENT = 6,        /* a value the engine refuses (wrong entity for a relationship, …) */
    CDM_IO = 7,                      /* a file that cannot be read or written */

    CDM_MISUSE = 101,                /* NULL handle or pointer, handle outside its callback, wrong state */
    CDM_NOTFOUND = 102,              /* unknown entity, attribute, relationship or mapping name; index out of range */
    CDM_MISMATCH = 103,              /* getter/setter of the wrong type for the attribute or value */
    CDM_ENCODING = 104,              /* a string that is not valid UTF-8 */

    CDM_VALIDATION_MULTIPLE_ERRORS = 1560,
    CDM_VALIDATION_MISSING_MANDATORY_PROPERTY = 1570,
    CDM_VALIDATION_RELATIONSHIP_LACKS_MINIMUM_COUNT = 1580,
    CDM_VALIDATION_RELATIONSHIP_EXCEEDS_MAXIMUM_COUNT = 1590,
    CDM_VALIDATION_NUMBER_TOO_LARGE = 1610,
    CDM_VALIDATION_NUMBER_TOO_SMALL = 1620,

    CDM_INCOMPATIBLE_VERSION_HASH = 134100,
    CDM_MIGRATION = 134110,
    CDM_MIGRATION_CANCELLED = 134120,
    CDM_MIGRATION_MISSING_SOURCE_MODEL = 134130,
    CDM_MIGRATION_MISSING_MAPPING_MODEL = 134140,
    CDM_MIGRATION_MANAGER_SOURCE_STORE = 134150,
    CDM_MIGRATION_MANAGER_DESTINATION_STORE = 134160,
    CDM_ENTITY_MIGRATION_POLICY = 134170,
    CDM_SQLITE = 134180,
    CDM_INFERRED_MAPPING_MODEL = 134190
};

/* A short English name of a result code ("migration cancelled"); a static string. */
const char *cdm_errstr(int code);

/* ---------------------------------------------------------------------------------------------
** Errors in detail. A cdm_error is owned by the handle (or thread) it came from and valid until
** the next failing call there, or until the handle is freed.
*/
typedef struct cdm_error cdm_error;

int cdm_error_code(const cdm_error *error);
/* The message; "" for a NULL error. */
const char *cdm_error_message(const cdm_error *error);
/* Where in the JSON document the problem is ("$.entities[2].attributes[0].type"); NULL if nowhere. */
const char *cdm_error_path(const cdm_error *error);
/* Zero-based offset in UTF-8 bytes (as sqlite3_error_offset) of where the expression or
** predicate at fault goes wrong; -1 if none. */
int cdm_error_offset(const cdm_error *error);
/* The individual problems (of a model, a mapping or the destination's validation). */
size_t cdm_error_count(const cdm_error *error);
/* The i-th problem, NULL when i is out of range; owned by `error`. */
const cdm_error *cdm_error_at(const cdm_error *error, size_t i);
/* What an individual validation error (1570–1620, alone or as a problem of a 1560) is about —
** Core Data's NSValidationObjectErrorKey and NSValidationKeyErrorKey: the destination instance's
** entity, object ID URI and primary key, and the attribute or relationship that failed. NULL
** (0 for the key) for any other error. */
const char *cdm_error_entity(const cdm_error *error);
const char *cdm_error_object_uri(const cdm_error *error);
int64_t cdm_error_primary_key(const cdm_error *error);
const char *cdm_error_key(const cdm_error *error);

/* The calling thread's last error (of any handle), CDM_OK / "" / NULL when there was none. */
int cdm_last_errcode(void);
const char *cdm_last_errmsg(void);
const cdm_error *cdm_last_error(void);

/* ---------------------------------------------------------------------------------------------
** Types of attributes (Core Data's NSAttributeType values) and of values. UNDEFINED, OBJECT_ID and
** COMPOSITE are only ever transient attributes (cdmigrate stores none of them; their values are
** not read or written through the typed getters and setters).
*/
enum cdm_attribute_type {
    CDM_ATTR_UNDEFINED = 0,
    CDM_ATTR_INTEGER16 = 100, CDM_ATTR_INTEGER32 = 200, CDM_ATTR_INTEGER64 = 300,
    CDM_ATTR_DECIMAL = 400, CDM_ATTR_DOUBLE = 500, CDM_ATTR_FLOAT = 600, CDM_ATTR_STRING = 700,
    CDM_ATTR_BOOLEAN = 800, CDM_ATTR_DATE = 900, CDM_ATTR_BINARY = 1000, CDM_ATTR_UUID = 1100,
    CDM_ATTR_URI = 1200, CDM_ATTR_TRANSFORMABLE = 1800, CDM_ATTR_OBJECT_ID = 2000,
    CDM_ATTR_COMPOSITE = 2100
};

enum cdm_value_type {
    CDM_VALUE_NULL = 0, CDM_VALUE_BOOL = 1, CDM_VALUE_INTEGER = 2, CDM_VALUE_DOUBLE = 3,
    CDM_VALUE_DECIMAL = 4, CDM_VALUE_STRING = 5, CDM_VALUE_DATE = 6, CDM_VALUE_BINARY = 7,
    CDM_VALUE_UUID = 8, CDM_VALUE_URI = 9, CDM_VALUE_OBJECT = 10, CDM_VALUE_COLLECTION = 11,
    /* `$manager` passed as an argument (Core Data passes the NSMigrationManager): the running
    ** migration, which the called function already has as its `ctx`. */
    CDM_VALUE_MANAGER = 12,
    /* An NSDictionary a transformable attribute's keyed archive holds (Core Data hands the policy
    ** the dictionary its transformer unarchives); entries in archive order. */
    CDM_VALUE_DICTIONARY = 13
};

/* ---------------------------------------------------------------------------------------------
** Models (NSManagedObjectModel), from the JSON of docs/model-format.md.
*/
typedef struct cdm_model cdm_model;

/* Reads a model from JSON text. Always sets *out (see Conventions); caller frees with cdm_model_free.
** Errors: CDM_INVALID_JSON, CDM_INVALID_MODEL (the problems are cdm_error_at(cdm_model_error(m), i)),
** CDM_ENCODING, CDM_MISUSE (NULL text or out). */
int cdm_model_from_json(const char *json, cdm_model **out);
/* The same from a file; CDM_IO when it cannot be read. */
int cdm_model_from_file(const char *path, cdm_model **out);
/* The model a store file carries: the one cached in its Z_MODELCACHE, else one rebuilt from its
** schema (names in lower case, optionality, defaults, delete rules and to-one inverses unknown;
** cdm_model_warnings_json says so). The store is read as a migration reads its source: nothing is
** created beside it (no -wal/-shm), a symbolic link is followed, committed transactions in its
** -wal are read. Always sets *out; caller frees with cdm_model_free. Errors: CDM_IO (no such
** file), CDM_MIGRATION_MANAGER_SOURCE_STORE (not a regular file, e.g. a FIFO; busy), CDM_SQLITE
** (not an SQLite database), CDM_INVALID_MODEL (a damaged model cache, or a database that is not a
** Core Data store), CDM_MISUSE (NULL path or out). Core Data needs the model to open a store; this is how a
** host gets one when it has lost it. */
int cdm_model_from_store(const char *path, cdm_model **out);
/* What reading the model noticed, as a JSON array of strings: its warnings, then, for a model
** cdm_model_from_store rebuilt from a schema, what the schema could not tell ([] when nothing).
** Caller frees *json with cdm_free. CDM_MISUSE (NULL or failed model, NULL json). */
int cdm_model_warnings_json(const cdm_model *model, char **json);
/* Frees a model. Migrations made from it keep what they need, so this may come before them. NULL is harmless. */
void cdm_model_free(cdm_model *model);

int cdm_model_errcode(const cdm_model *model);
const char *cdm_model_errmsg(const cdm_model *model);
const cdm_error *cdm_model_error(const cdm_model *model);

/* Entities, in the model's order; the name is owned by the model. */
int cdm_model_entity_count(const cdm_model *model, size_t *count);
int cdm_model_entity_at(const cdm_model *model, size_t i, const char **name);
/* The model as model JSON (docs/model-format.md) with each entity's version hash (Apple's,
** base64), so a store written with the model is recognised by the JSON read back. Caller frees
** *json with cdm_free. CDM_MISUSE (NULL or failed model, NULL json). */
int cdm_model_json(const cdm_model *model, char **json);
/* The index of an attribute in an entity (inherited attributes first, so an inherited attribute
** has the same index in every subentity), for the *_at getters and setters; and its type
** (enum cdm_attribute_type). CDM_NOTFOUND for an unknown entity or attribute. These never change
** the model: errors go only to the thread's last error, so models stay shareable. */
int cdm_model_attribute_index(const cdm_model *model, const char *entity, const char *attribute, int *index);
int cdm_model_attribute_type(const cdm_model *model, const char *entity, const char *attribute, int *type);

/* Introspection of an entity: its attributes and relationships, inherited ones first (so an
** inherited property has the same index in every subentity). Names are interned by the library
** and valid for the life of the process. CDM_NOTFOUND for an unknown entity, property or index. */
typedef struct cdm_attribute_info {
    const char *name;
    const char *entity;        /* the entity that declares it (a parent for an inherited one) */
    int index;                 /* for the *_at getters and setters and cdm_field.index */
    int type;                  /* enum cdm_attribute_type */
    int is_optional;
    int is_transient;
} cdm_attribute_info;

typedef struct cdm_relationship_info {
    const char *name;
    const char *entity;              /* the declaring entity */
    const char *destination_entity;
    const char *inverse;             /* NULL when it has none */
    int index;
    int is_to_many;
    int is_ordered;
    int is_optional;
    int min_count;                   /* 0: no minimum */
    int max_count;                   /* 0: no maximum; 1 for a to-one */
} cdm_relationship_info;

/* The parent entity's name, NULL for a root entity. */
int cdm_model_entity_parent(const cdm_model *model, const char *entity, const char **parent);
int cdm_model_attribute_count(const cdm_model *model, const char *entity, size_t *count);
int cdm_model_attribute_at(const cdm_model *model, const char *entity, size_t index, cdm_attribute_info *info);
int cdm_model_attribute_info(const cdm_model *model, const char *entity, const char *attribute, cdm_attribute_info *info);
int cdm_model_relationship_count(const cdm_model *model, const char *entity, size_t *count);
int cdm_model_relationship_at(const cdm_model *model, const char *entity, size_t index, cdm_relationship_info *info);
int cdm_model_relationship_info(const cdm_model *model, const char *entity, const char *relationship, cdm_relationship_info *info);

/* ---------------------------------------------------------------------------------------------
** Mapping models (NSMappingModel), from the JSON of docs/mapping-format.md, from Xcode's
** .xcmappingmodel, or from the compiled .cdm Xcode builds into an app (docs/compiled-models.md).
*/
typedef struct cdm_mapping cdm_mapping;

/* Always sets *out; caller frees with cdm_mapping_free. CDM_INVALID_JSON, CDM_INVALID_MAPPING,
** CDM_EXPRESSION_SYNTAX (with the offset), CDM_IO, CDM_ENCODING; CDM_INVALID_ARGUMENT for an Xcode
** .xcmappingmodel (or .xml) path, which cdm_mapping_from_xcode_file reads. A path ending in .cdm
** (or Xcode's .cdm_precompiled) is read as a compiled mapping model. */
int cdm_mapping_from_json(const char *json, cdm_mapping **out);
int cdm_mapping_from_file(const char *path, cdm_mapping **out);
/* An Xcode mapping model (the .xcmappingmodel folder or its xcmapping.xml), compiled against the
** two models as Xcode's mapping model compiler does and checked against them (docs/mapping-format.md,
** "From Xcode"). A compiled .cdm (or a JSON mapping) is read and checked against the two models the
** same way. Always sets *out. CDM_INVALID_MAPPING naming the object (id and line) of a
** malformed document or every problem of a mapping that does not fit the models, CDM_IO,
** CDM_MISUSE for a NULL path or model. */
int cdm_mapping_from_xcode_file(const char *path, const cdm_model *source_model, const cdm_model *destination_model,
                                cdm_mapping **out);
void cdm_mapping_free(cdm_mapping *mapping);
/* Checks the mapping against a source and a destination model (cdm_migration_new does too);
** CDM_INVALID_MAPPING with every problem in cdm_mapping_error. The mapping is not changed (only
** its last error): checking it against other models, or using it in other migrations, leaves
** earlier migrations as they were. */
int cdm_mapping_validate(const cdm_mapping *mapping, const cdm_model *source, const cdm_model *destination);

int cdm_mapping_errcode(const cdm_mapping *mapping);
const char *cdm_mapping_errmsg(const cdm_mapping *mapping);
const cdm_error *cdm_mapping_error(const cdm_mapping *mapping);

/* Entity mappings, in order; the name is owned by the mapping. */
int cdm_mapping_entity_mapping_count(const cdm_mapping *mapping, size_t *count);
int cdm_mapping_entity_mapping_at(const cdm_mapping *mapping, size_t i, const char **name);

/* The mapping model Core Data would infer between two models (NSMappingModel's
** inferredMappingModelForSourceModel:destinationModel:): entity mappings named as Core Data names
** them (IEM_Copy_<Entity>, IEM_Transform_<Entity>, IEM_Add_<Entity>, IEM_Remove_<Entity>). Always
** sets *out (see Conventions); caller frees with cdm_mapping_free. CDM_INFERRED_MAPPING_MODEL
** when the change cannot be inferred (each problem in cdm_mapping_error names the entity, the
** property and the rule), CDM_MISUSE (NULL or failed models, NULL out). */
int cdm_mapping_infer(const cdm_model *source, const cdm_model *destination, cdm_mapping **out);
/* The mapping model as mapping JSON (docs/mapping-format.md), every expression written out; it
** reads back with cdm_mapping_from_json. Caller frees *json with cdm_free. CDM_MISUSE (NULL or
** failed mapping, NULL json). */
int cdm_mapping_json(const cdm_mapping *mapping, char **json);

/* ---------------------------------------------------------------------------------------------
** Short-lived handles handed to callbacks.
**
** cdm_context — the running migration as one callback sees it (the manager, the current entity
**   mapping). Valid only during the callback it was passed to.
** cdm_object — an instance (NSManagedObject) of the source or the destination store. Valid only
**   during the callback that received or obtained it (or, for a cdm_store's instances, until the
**   store is closed), and only on that thread; afterwards every call with it gives CDM_MISUSE.
**   To keep an instance across callbacks (as a policy keeps a name → instance dictionary),
**   cdm_object_retain it: it then lives until cdm_object_release or the end of the migration run.
**   Or keep its cdm_object_uri or cdm_object_id and use cdm_context_instance_for_uri / _with_id,
**   or fetch it (cdm_context_fetch_destination).
** cdm_value — a value (an expression's result, a host function's argument or result). Same
**   lifetime as cdm_object.
*/
typedef struct cdm_context cdm_context;
typedef struct cdm_object cdm_object;
typedef struct cdm_value cdm_value;

/* Which store an instance belongs to (cdm_object_id, cdm_context_instance_with_id, cdm_context_model). */
enum cdm_store_kind { CDM_STORE_OTHER = 0, CDM_STORE_SOURCE = 1, CDM_STORE_DESTINATION = 2 };

/* A value with its name, for predicate arguments, bulk reads (cdm_object_get_fields) and bulk
** writes (cdm_object_set_fields, cdm_context_create_instance_with_fields) — one call per instance
** instead of one per value, which is what a host behind an FFI (Python's ctypes) needs.
**   name    attribute name (writes: NULL means use `index`; arguments: NULL for a positional %@
**           argument, else the $variable it binds, with or without the '$'). Reads fill it in.
**   index   attribute index (cdm_model_attribute_index) when name is NULL; reads fill it in.
**   type    enum cdm_value_type; then one of:
**   integer BOOL (0/1), INTEGER
**   number  DOUBLE, DATE (seconds since 2001-01-01 UTC)
**   data, length   STRING, DECIMAL, URI (UTF-8; on input length CDM_NUL_TERMINATED means up to the NUL),
**           BINARY, UUID (16 bytes; length ignored on input)
**   object  OBJECT (arguments only; NULL means a null value)
** CDM_VALUE_COLLECTION is not accepted (CDM_MISMATCH). Helpers: cdm_field_text, cdm_field_int64, … below. */
typedef struct cdm_field {
    const char *name;
    int index;
    int type;
    int64_t integer;
    double number;
    const void *data;
    size_t length;
    cdm_object *object;
} cdm_field;

static inline cdm_field cdm_field_null(const char *name) {
    cdm_field f = {name, -1, CDM_VALUE_NULL, 0, 0, NULL, 0, NULL}; return f; }
static inline cdm_field cdm_field_int64(const char *name, int64_t v) {
    cdm_field f = {name, -1, CDM_VALUE_INTEGER, v, 0, NULL, 0, NULL}; return f; }
static inline cdm_field cdm_field_bool(const char *name, int v) {
    cdm_field f = {name, -1, CDM_VALUE_BOOL, v != 0, 0, NULL, 0, NULL}; return f; }
static inline cdm_field cdm_field_double(const char *name, double v) {
    cdm_field f = {name, -1, CDM_VALUE_DOUBLE, 0, v, NULL, 0, NULL}; return f; }
static inline cdm_field cdm_field_date(const char *name, double seconds_since_2001) {
    cdm_field f = {name, -1, CDM_VALUE_DATE, 0, seconds_since_2001, NULL, 0, NULL}; return f; }
static inline cdm_field cdm_field_text(const char *name, const char *text) {
    cdm_field f = {name, -1, CDM_VALUE_STRING, 0, 0, text, CDM_NUL_TERMINATED, NULL}; return f; }
static inline cdm_field cdm_field_blob(const char *name, const void *bytes, size_t length) {
    cdm_field f = {name, -1, CDM_VALUE_BINARY, 0, 0, bytes, length, NULL}; return f; }
static inline cdm_field cdm_field_object(const char *name, cdm_object *object) {
    cdm_field f = {name, -1, CDM_VALUE_OBJECT, 0, 0, NULL, 0, object}; return f; }
/* The same for an attribute index (name NULL): set .index after any helper, e.g.
** cdm_field f = cdm_field_text(NULL, "x"); f.index = title_index; */

/* Flags of the bulk writes. */
enum cdm_fields_flag {
    CDM_FIELDS_SKIP_UNKNOWN = 1,   /* skip names the entity lacks (and relationships), as setValuesForKeysWithDictionary: policies need */
    CDM_FIELDS_SKIP_NULL = 2       /* skip CDM_VALUE_NULL fields */
};

/* cdm_list — the instances a fetch found. Same lifetime as cdm_object. */
typedef struct cdm_list cdm_list;

/* ---------------------------------------------------------------------------------------------
** Migrations (NSMigrationManager).
*/
typedef struct cdm_migration cdm_migration;

/* A custom policy (NSEntityMigrationPolicy): the hooks of the engine in Core Data's order, per
** entity mapping whose "policy" names it. Any hook may be NULL: create_destination_instances and
** create_relationships then do Core Data's default (make the destination instance, apply the
** attribute mappings, associate / apply the relationship mappings), the others nothing.
** A hook returns CDM_OK to go on; any other value stops the migration, which then returns that
** code from cdm_migration_run with the message given to cdm_context_fail (or, without one, the
** message of the context's last failed call). `user` is the pointer given at registration. */
/* cdm_batch — the source rows of one call of a policy's batch hook (see below). Valid during
** that call only, like cdm_object. */
typedef struct cdm_batch cdm_batch;

typedef struct cdm_policy {
    int (*begin)(cdm_context *ctx, void *user);
    int (*create_destination_instances)(cdm_context *ctx, cdm_object *source, void *user);
    int (*end_instance_creation)(cdm_context *ctx, void *user);
    int (*create_relationships)(cdm_context *ctx, cdm_object *destination, void *user);
    int (*end_relationship_creation)(cdm_context *ctx, void *user);
    int (*perform_custom_validation)(cdm_context *ctx, void *user);
    int (*end)(cdm_context *ctx, void *user);
    /* cdmigrate's extension beyond Core Data (appended: a host built against an older header
    ** passes a smaller policy_size and keeps its hooks). When not NULL, stage 1 calls it instead
    ** of create_destination_instances, for the mapping's source rows in batches (up to the
    ** migration's batch size, 5,000 by default; in primary-key order; never an empty batch).
    ** The cdm_batch_* and the bulk cdm_context_* functions below work on whole arrays, so a
    ** policy's work per row costs a few array elements instead of calls. Initialise the struct
    ** with {0} (or memset) and set the hooks by name: a positional initializer of the seven
    ** older hooks leaves this one NULL too, but -Wmissing-field-initializers warns about it. */
    int (*create_destination_instances_batch)(cdm_context *ctx, cdm_batch *batch, void *user);
} cdm_policy;

/* ---------------------------------------------------------------------------------------------
** Batches (cdmigrate's extension beyond Core Data, for the batch hook). Arrays and texts handed
** out are the library's, valid until the hook returns. Every call returns CDM_MISUSE for a NULL,
** stale or wrong handle or a NULL out pointer, and sets the context's error as the other calls.
*/
/* The number of source rows in the batch (at least 1). */
int cdm_batch_count(cdm_batch *batch, size_t *count);
/* The source rows' primary keys, ascending: *keys points at *count int64_t. */
int cdm_batch_source_keys(cdm_batch *batch, const int64_t **keys, size_t *count);
/* One attribute of the source entity (or of a sub-entity) for every row, read in one query, as
** one JSON array text in row order: null, true/false, numbers, text; a date is a number of
** seconds since 2001, binary data base64 text, a decimal, UUID or URI text; a row whose entity
** lacks the attribute gives null. CDM_NOTFOUND when no source entity of the mapping has it. */
int cdm_batch_column_json(cdm_batch *batch, const char *attribute, const char **json);
/* One text attribute (string, URI or decimal) of the source entity (or of a sub-entity) for every
** row, read in one query, as C arrays — no JSON to parse: *texts points at *count NUL-terminated
** UTF-8 texts in row order, NULL for a null value or a row whose entity lacks the attribute;
** *lengths (may be NULL) at their lengths in bytes (0 for NULL; a text may hold a NUL byte, its
** length counts it). CDM_NOTFOUND when no source entity of the mapping has the attribute;
** CDM_MISMATCH for an attribute of another type (read it with cdm_batch_column_json). */
int cdm_batch_column_text(cdm_batch *batch, const char *attribute, const char *const **texts, const size_t **lengths,
                          size_t *count);
/* Core Data's default create_destination_instances for every row at once: a destination instance
** of the mapping's destination entity, the attribute mappings applied, the association made — as
** one INSERT … SELECT over the batch's keys when the attribute mappings translate to SQL. *keys
** (may be NULL) gets the new instances' primary keys, one per source row in order; *count (may be
** NULL) their number (0 for a mapping without a destination entity). Errors as the attribute
** mappings give them. */
int cdm_batch_apply_default(cdm_batch *batch, const int64_t **keys, size_t *count);
/* As cdm_batch_apply_default, the new instances numbered as instances made one by one in row order
** would be (the next primary keys of their table): never the source keys, which
** cdm_batch_apply_default keeps when the mapping takes its source entity whole into an empty
** table (unless an earlier batch of the mapping kept them). For a host that makes some batches'
** rows one by one and must number every row as Core Data's per-row calls would; the Python
** binding runs single-row hooks over batches with it. Errors as cdm_batch_apply_default. */
int cdm_batch_apply_default_numbered(cdm_batch *batch, const int64_t **keys, size_t *count);
/* Associates the batch's rows source_keys[i] with the instances of `destination_entity` of keys
** destination_keys[i] (i < count), for the current entity mapping, as cdm_context_associate does
** one pair. CDM_NOTFOUND for an unknown entity; CDM_INVALID_ARGUMENT for a source key not in the
** batch or a destination key no instance has; CDM_MISUSE for NULL arrays with count > 0. */
int cdm_batch_associate(cdm_batch *batch, const char *destination_entity, const int64_t *source_keys,
                        const int64_t *destination_keys, size_t count);
/* Makes one instance of the destination entity `entity` per object of the JSON array `rows_json`
** ({"attribute": value, …}; values as cdm_batch_column_json writes them, a date also as ISO 8601
** text), converted to the attributes' types as cdm_object_set does. *keys (may be NULL) gets their
** primary keys in order, *count (may be NULL) their number. Usable in any hook. CDM_NOTFOUND for an
** unknown entity or attribute; CDM_INVALID_JSON for text that is not an array of objects;
** CDM_INVALID_ARGUMENT for a value that does not suit its attribute or an abstract entity. */
int cdm_context_create_instances_json(cdm_context *ctx, const char *entity, const char *rows_json,
                                      const int64_t **keys, size_t *count);
/* Relates destination instances pairwise: the instance of `entity` with key owners[i] gets the
** instance with key targets[i] added to its to-many `relationship` (or set as its to-one), the
** inverse following, for i < count — plain join tables and foreign keys by one prepared statement
** per pair. Usable in any hook. CDM_NOTFOUND for an unknown entity or relationship;
** CDM_INVALID_ARGUMENT for a key no instance has; CDM_MISUSE for NULL arrays with count > 0. */
int cdm_context_relate(cdm_context *ctx, const char *entity, const char *relationship,
                       const int64_t *owners, const int64_t *targets, size_t count);
/* How cdm_batch_columns lays out an attribute's values, by the attribute's type. */
enum cdm_column_kind {
    CDM_COLUMN_INTEGER = 1, /* int64_t per row: integer attributes; booleans as 0 or 1 */
    CDM_COLUMN_DOUBLE = 2,  /* double per row: double and float attributes; dates as seconds since 2001 */
    CDM_COLUMN_TEXT = 3,    /* UTF-8 texts: strings, URIs, decimals, UUIDs (as their text) */
    CDM_COLUMN_BYTES = 4    /* bytes: binary data, a transformable attribute's stored bytes */
};
/* Several attributes of the source entity (or of a sub-entity) for every row, read in one query,
** as flat C arrays: no JSON to parse and no allocation per value. For attributes[i] (i <
** attribute_count): kinds[i] gets its enum cdm_column_kind; values[i] points
** at *count int64_t (CDM_COLUMN_INTEGER) or doubles (CDM_COLUMN_DOUBLE), or, for CDM_COLUMN_TEXT
** and CDM_COLUMN_BYTES, at *count + 1 int64_t offsets into bytes[i]: row r's value starts at
** bytes[i] + offsets[r] and is offsets[r + 1] - offsets[r] - 1 bytes long, followed by a NUL byte
** (so a text is also a C string, unless it holds a NUL itself); bytes[i] is an empty text for the
** number kinds. nulls[i] points at null_counts[i] ascending row indexes whose value is null (a
** null value, a row whose entity lacks the attribute, a number that is not finite), whose slot
** holds 0 or an empty value. The values are those cdm_batch_column_json gives (texts as the
** library reads them: ill-formed UTF-8 repaired with U+FFFD). Every output array must have room
** for attribute_count elements (nulls, null_counts and bytes may be NULL when not wanted); *count
** gets the number of rows. CDM_NOTFOUND naming the first attribute no source entity of the mapping
** has; CDM_MISMATCH for an attribute without values of its own (undefined, object ID, composite:
** read it with cdm_batch_column_json). */
int cdm_batch_columns(cdm_batch *batch, const char *const *attributes, size_t attribute_count, int *kinds,
                      const void **values, const char **bytes, const int64_t **nulls, size_t *null_counts,
                      size_t *count);

/* A host function for FUNCTION(CAST("Class", "Class"), "selector:", args…): reads argv[0..argc),
** writes its result into `result` (cdm_value_set_*; NULL if untouched). Returns CDM_OK, or a code
** that stops the migration as a policy hook does. */
typedef int (*cdm_function)(cdm_context *ctx, int argc, cdm_value *const *argv, cdm_value *result, void *user);

/* Where a migration stands. Valid during the progress callback only. */
typedef struct cdm_progress {
    double fraction;            /* 0…1 over all stages and passes */
    int stage;                  /* 1 create destination instances, 2 create relationships, 3 validate */
    int pass;                   /* 0-based mapping model of a multi-pass migration */
    const char *entity_mapping; /* the current entity mapping's name ("" at the very end) */
    int64_t processed;          /* instances handled in this step so far */
    int64_t total;              /* instances in this step (0 when not known) */
    /* Appended after the fields above: a host built against a header without them still reads those. */
    int64_t run_processed;      /* rows handled in the whole run so far (every stage, pass and chain step) */
    int64_t run_total;          /* rows of the whole run as far as known (0: none known, as for a step
                                ** done as schema changes); may grow as steps count theirs; a chain
                                ** counts the steps to come as the size of the current one.
                                ** run_processed / run_total is what an ETA uses. */
    int step;                   /* 0-based step of a chain (0 outside one) */
    int step_count;             /* steps of the chain (1 outside one) */
} cdm_progress;

/* Returns 0 to go on; any non-zero value cancels (the run returns CDM_MIGRATION_CANCELLED). */
typedef int (*cdm_progress_callback)(const cdm_progress *progress, void *user);

/* Makes a migration from a source model, a destination model and `count` mapping models (one per
** pass, in order), checking every mapping against the models. Always sets *out; caller frees with
** cdm_migration_free. The migration keeps what it needs — its own copy of each mapping, bound to
** these models — so the models and mappings may be freed afterwards, and a mapping may be
** shared with migrations between other models. CDM_INVALID_MAPPING (problems in cdm_migration_error), CDM_MIGRATION_MISSING_MAPPING_MODEL
** (count 0), CDM_MISUSE (NULL or failed handles). */
int cdm_migration_new(const cdm_model *source, const cdm_model *destination,
                      cdm_mapping *const *mappings, size_t count, cdm_migration **out);
/* Frees a migration and calls the destroy functions of its registrations. CDM_MISUSE (and
** nothing freed) when called from inside one of its own callbacks. NULL is harmless. */
int cdm_migration_free(cdm_migration *migration);

/* Registers the policy mappings name in their "policy". The hooks are copied (policy_size is
** sizeof(cdm_policy), so that later versions can add hooks). Ownership of `user` passes to the
** migration in every case: destroy(user) (if not NULL) is called exactly once — when the
** migration is freed, when the name is registered again, or at once if this call fails. */
int cdm_migration_register_policy(cdm_migration *migration, const char *name, const cdm_policy *policy,
                                  size_t policy_size, void *user, void (*destroy)(void *user));
/* Registers the function FUNCTION(CAST("class_name", "Class"), "selector", …) calls. Ownership
** of `user` as for cdm_migration_register_policy. */
int cdm_migration_register_function(cdm_migration *migration, const char *class_name, const char *selector,
                                    cdm_function function, void *user, void (*destroy)(void *user));
/* A method of a policy, for FUNCTION($entityPolicy, "selector:", args…) in the value expressions of
** the entity mappings whose "policy" is `policy_name` (Core Data sends the message to the
** mapping's NSEntityMigrationPolicy object). As a cdm_function, plus the selector it was called
** for. Return CDM_NOTFOUND to say the policy has no method for `selector`: the evaluation then
** fails with CDM_EXPRESSION_EVALUATION naming the policy and the selector, as it does for a
** selector nothing is registered for. */
typedef int (*cdm_policy_method)(cdm_context *ctx, const char *selector, int argc, cdm_value *const *argv, cdm_value *result,
                                 void *user);
/* Registers the method of the policy `policy_name` for `selector` ("fooWithBar:baz:"), or with
** selector NULL for every selector without a method of its own. Registering again for the same
** policy and selector replaces the method (destroying the old user). Ownership of `user` as for
** cdm_migration_register_policy. */
int cdm_migration_register_policy_method(cdm_migration *migration, const char *policy_name, const char *selector,
                                         cdm_policy_method method, void *user, void (*destroy)(void *user));
/* Sets (or with NULL removes) the progress callback, called at the start of every step and every
** `interval` instances within one (cdm_migration_set_progress_interval, default 500). Ownership of
** `user` as for cdm_migration_register_policy. */
int cdm_migration_set_progress(cdm_migration *migration, cdm_progress_callback callback, void *user,
                               void (*destroy)(void *user));
int cdm_migration_set_progress_interval(cdm_migration *migration, size_t interval);
/* The number of source instances stage 1 handles between writes of the destination, and the
** size of the batches a policy's create_destination_instances_batch gets (default 5,000; at least
** 1, else CDM_INVALID_ARGUMENT). CDM_MISUSE while the migration runs. */
int cdm_migration_set_batch_size(cdm_migration *migration, size_t size);
/* The migration's userInfo from outside a run (e.g. configuration set before cdm_migration_run);
** the same rules as cdm_context_set_user_info — what is set is released when the run ends. */
int cdm_migration_set_user_info(cdm_migration *migration, const char *key, void *pointer, void (*destroy)(void *pointer));
int cdm_migration_get_user_info(cdm_migration *migration, const char *key, void **pointer);

/* Migrates the store at source_path into a new store at destination_path, which must not exist
** (nor appear during the run, nor have -wal/-shm/-journal files beside it); another migration to
** the same destination fails as busy. The source is never written and nothing is created beside
** it (docs/reliability.md). On any error — including a hook's or host
** function's code and a cancellation — nothing is left at destination_path and the code comes
** back here, with the message in cdm_migration_errmsg. Not reentrant: CDM_MISUSE from a callback. */
int cdm_migration_run(cdm_migration *migration, const char *source_path, const char *destination_path);
/* Migrates a store and replaces it with the result, only after everything succeeded (atomic
** rename; committed transactions still in the old store's -wal are checkpointed into its main
** file first). On error the store's contents are unchanged; the message says whether that
** checkpoint happened. A store open in another process, or being migrated, fails as busy. */
int cdm_migration_run_in_place(cdm_migration *migration, const char *path);
/* What the last successful run did, as a JSON object {"mappings": [{"pass", "entityMapping",
** "sourceInstances", "associations", "instancesBySQL", "relationshipsBySQL"}], "destinationCounts":
** {entity: n}, "untakenSourceInstances": {entity: n}, "warnings": […], "missingExternalDataFiles": n,
** "losses": [{"kind", "entity", "property", "entityMapping", "pass", "policy", "count", "intended"}], "bySchemaChanges": bool,
** "schemaChanges": [text…], "schemaChangesNotDone": text or null}
** — the report `cdmigrate migrate --json` prints, keys in docs/cli.md (for a chain handle,
** cdm_migrate_chain's report, each step's report under its "report"). missingExternalDataFiles
** counts the external binary data files source rows named but the source's
** .<name>_SUPPORT/_EXTERNAL_DATA folder lacked (their values were migrated as nil; the warnings name
** them); "losses", the loss report, has the keys of docs/loss-report.md. Caller frees with cdm_free.
** CDM_MISUSE before a successful run. */
int cdm_migration_report_json(cdm_migration *migration, char **json);
/* What checking the models and mapping models noticed, before any run (the report's warnings
** start with the same lines): a JSON array of strings — a destination attribute or relationship
** no property mapping fills while the source entity has one of that name, an entity mapping
** without a source expression, a model's versionHash that differs from the computed one, what an
** Xcode mapping model dropped. A run adds entity mappings that took no source instances.
** Caller frees with cdm_free. */
int cdm_migration_warnings_json(cdm_migration *migration, char **json);
/* The versions of the source model (an .xcdatamodeld or a folder of JSON models): when the source
** store does not match the source model, the CDM_MIGRATION_MISSING_SOURCE_MODEL message names the
** version it does match. NULL forgets them. CDM_IO, CDM_INVALID_MODEL when the set cannot be read;
** CDM_MISUSE from a callback. */
int cdm_migration_set_model_versions(cdm_migration *migration, const char *model_set_path);
/* Whether a run compares the store's entity hashes with the source model's (check non-zero, the
** default) or skips that comparison (0; the store is read with the source model as it is, as
** `cdmigrate migrate --no-version-check`). CDM_MISUSE for a chain handle (a chain finds the
** store's version by its hashes) or from a callback. */
int cdm_migration_set_source_version_check(cdm_migration *migration, int check);
/* Whether a run that loses data its mapping does not declare as intended fails (fail non-zero)
** with CDM_MIGRATION before the hand-over, nothing written at the destination, the message listing
** the losses; 0 (the default) runs on and reports them in the report JSON's "losses"
** (docs/loss-report.md; `cdmigrate migrate --strict`). For a chain handle, every step; an
** inferred step declares nothing. CDM_MISUSE from a callback. */
int cdm_migration_set_fail_on_unintended_loss(cdm_migration *migration, int fail);
/* Whether a step SQLite can express as schema changes (renamed, added and dropped attributes and
** entities, shifted entity numbers; no policy, plain copies) is done as such on a private copy of
** the source file (tries non-zero, the default) rather than by writing every row (0: always the
** general path). The result is the same on every store whose values its model allows (a column the
** change does not touch is carried as it is, not converted); the report JSON's "bySchemaChanges" says which ran,
** "schemaChanges" lists the changes and "schemaChangesNotDone" why an attempt went the general way
** (docs/schema-step.md). CDM_MISUSE for a chain handle or from a callback. */
int cdm_migration_set_schema_changes(cdm_migration *migration, int tries);

int cdm_migration_errcode(const cdm_migration *migration);
const char *cdm_migration_errmsg(const cdm_migration *migration);
const cdm_error *cdm_migration_error(const cdm_migration *migration);

/* ---------------------------------------------------------------------------------------------
** Progressive migration (Core Data's staged migration; docs/c-api.md, "Progressive migration").
** `models_path` is a model set: an .xcdatamodeld, a folder of JSON models or a .momd, with the
** mapping models beside it. The store's version is found by its entity hashes; each step to the
** next version uses the mapping models that record its versions, else Core Data's inferred
** mapping. `target_version` NULL means the set's current version. Errors are the thread's last
** error (cdm_last_error): CDM_MIGRATION_MISSING_SOURCE_MODEL when no version matches the store
** (the message lists its hashes), CDM_INFERRED_MAPPING_MODEL for a step that cannot be inferred,
** CDM_ENTITY_MIGRATION_POLICY for a step whose mapping names a policy (cdm_migrate_chain takes
** no host policies: a chain handle, cdm_migration_new_chain, does). */

/* The plan as JSON {"store", "storeVersion", "targetVersion", "currentVersion", "versions": […],
** "steps": [{"from", "to", "inferred", "mappingModels": […], "reason", "policies": […]}],
** "warnings": […], "passes": […] (see "Fused steps" below)}; empty "steps" when the store is at
** the target. Only the store's metadata is
** read. Caller frees *plan_json with cdm_free. */
int cdm_chain_plan(const char *models_path, const char *store_path, const char *target_version, char **plan_json);
/* Runs the plan: into a new store at destination_path (which must not exist; a store already at
** the target is copied), or, with destination_path NULL, in place (a store at the target is left
** as it is). Intermediate stores live in a private folder beside the destination and are removed;
** on any error nothing is left and the source is untouched. report_json (may be NULL) receives
** {"storeVersion", "targetVersion", "alreadyAtTarget", "copied", "steps": [{"from", "to",
** "inferred", "mappingModels", "report": {the step's report, as cdm_migration_report_json's}}]};
** caller frees it with cdm_free. */
int cdm_migrate_chain(const char *models_path, const char *store_path, const char *target_version,
                      const char *destination_path, char **report_json);
/* The model set at models_path (an .xcdatamodeld, a .momd or a folder of JSON models, with its
** mapping models) as the files of a folder of JSON models, as `cdmigrate import` writes them:
** {"versions": […], "currentVersion", "mappingModels": [{"name", "from", "to"}],
** "files": [{"name", "text"}], "warnings": […]}. "files" holds, in writing order, <version>.json per
** version (model JSON with Apple's entity hashes), <name>.mapping.json per mapping model that
** records a pair of the set's versions (bound to them, an Xcode mapping compiled against them,
** written with their entity hashes), migration-passes.json when the set has one, and
** current-version; a host writes each text as it is. A mapping model that records no pair of
** versions is left out with a warning. Errors: CDM_IO, CDM_INVALID_MODEL, CDM_INVALID_MAPPING
** (naming the file), CDM_MISUSE for NULL arguments. Caller frees *set_json with cdm_free. */
int cdm_model_set_json(const char *models_path, char **set_json);

/* A chain as a cdm_migration: every registration of a single migration works on it
** (cdm_migration_register_policy, _register_function, _register_policy_method, _set_progress,
** _set_progress_interval, _set_user_info) and applies to every step, as NSStagedMigrationManager's
** stages share the app's policy classes. cdm_migration_run / cdm_migration_run_in_place then
** migrate a store at any version of the set to target_version (NULL: the current one) in one
** call: the store's version is found anew on every run, then the steps run as cdm_migrate_chain's
** do, each step's callbacks getting a cdm_context of that step (its models, mapping and
** userInfo). Before any step runs, a step whose mapping names a policy that is not registered
** fails with CDM_ENTITY_MIGRATION_POLICY naming the step and the policy. The progress fraction is
** over the whole chain; a cancellation stops it. User info set with cdm_migration_set_user_info
** between runs is what every step's userInfo starts with (released when the run ends); objects
** retained with cdm_object_retain live until the end of their step. cdm_migration_report_json
** gives cdm_migrate_chain's report. Always sets *out (a constructor); caller frees with
** cdm_migration_free. CDM_INVALID_ARGUMENT for an unknown target version; the model set's errors. */
int cdm_migration_new_chain(const char *models_path, const char *target_version, cdm_migration **out);

/* ---------------------------------------------------------------------------------------------
** Inside a callback: the context (NSMigrationManager and the current NSEntityMapping).
** Strings returned are valid during the callback. Errors are kept by the context.
*/
int cdm_context_errcode(cdm_context *ctx);
const char *cdm_context_errmsg(cdm_context *ctx);
const cdm_error *cdm_context_error(cdm_context *ctx);

/* Records the host's error and returns `code` (CDM_ENTITY_MIGRATION_POLICY when code is CDM_OK),
** so that a hook can `return cdm_context_fail(ctx, 42, "no such customer");`. message may be NULL. */
int cdm_context_fail(cdm_context *ctx, int code, const char *message);

/* The current entity mapping: its name, its source and destination entity names (NULL when it has
** none), and the pass (0-based mapping model). */
int cdm_context_entity_mapping_name(cdm_context *ctx, const char **name);
int cdm_context_source_entity_name(cdm_context *ctx, const char **name);
int cdm_context_destination_entity_name(cdm_context *ctx, const char **name);
int cdm_context_pass(cdm_context *ctx, int *pass);

/* Makes a new destination instance of a (concrete) entity, with its default values. */
int cdm_context_create_instance(cdm_context *ctx, const char *entity, cdm_object **out);
/* Evaluates the current entity mapping's attribute value expressions with $source = source (may be
** NULL) and $destination = destination, and sets the results on destination (what Core Data's
** default createDestinationInstances does between making and associating an instance). */
int cdm_context_apply_attribute_mappings(cdm_context *ctx, cdm_object *source, cdm_object *destination);
/* Records that destination was made from source by the current entity mapping
** (associateSourceInstance:withDestinationInstance:forEntityMapping:). */
int cdm_context_associate(cdm_context *ctx, cdm_object *source, cdm_object *destination);
/* destinationInstancesForEntityMappingNamed:sourceInstances: — the destination instances the named
** entity mapping of the current pass made from `sources`. *out is an array of *count handles owned
** by the library, valid during the callback. CDM_NOTFOUND for an unknown mapping name. */
int cdm_context_destination_instances(cdm_context *ctx, const char *entity_mapping, cdm_object *const *sources,
                                      size_t source_count, cdm_object *const **out, size_t *count);
/* sourceInstancesForEntityMappingNamed:destinationInstances:, the other way round. */
int cdm_context_source_instances(cdm_context *ctx, const char *entity_mapping, cdm_object *const *destinations,
                                 size_t destination_count, cdm_object *const **out, size_t *count);
/* Parses and evaluates a value expression ("$source.title", "FUNCTION($source.name, 'uppercaseString')")
** with $source/$destination bound to the given instances (either may be NULL). *result is valid
** during the callback. CDM_EXPRESSION_SYNTAX (with cdm_error_offset), CDM_EXPRESSION_EVALUATION. */
int cdm_context_evaluate(cdm_context *ctx, const char *expression, cdm_object *source, cdm_object *destination,
                         cdm_value **result);

/* --- The current entity mapping (NSEntityMapping) --------------------------------------------
** Strings are valid during the callback. CDM_MISUSE in a callback without an entity mapping. */
/* userInfo[key] as text: *value is NULL when the key is absent (not an error). Values that are not
** strings are given as text: numbers in decimal, booleans YES/NO, dates in ISO 8601, data in base64. */
int cdm_context_mapping_user_info(cdm_context *ctx, const char *key, const char **value);
int cdm_context_mapping_user_info_count(cdm_context *ctx, size_t *count);
/* The i-th entry, keys in byte order. */
int cdm_context_mapping_user_info_at(cdm_context *ctx, size_t i, const char **key, const char **value);
/* userInfo[key] with its type (CDM_VALUE_STRING, _INTEGER, _DOUBLE, _DECIMAL, _BOOL, _DATE, _BINARY,
** _UUID, _URI: a number 2 and a string "2" stay apart), read-only and valid during the callback;
** *value is NULL when the key is absent (not an error). By key, or the i-th entry in byte order. */
int cdm_context_mapping_user_info_value(cdm_context *ctx, const char *key, cdm_value **value);
int cdm_context_mapping_user_info_value_at(cdm_context *ctx, size_t i, const char **key, cdm_value **value);

enum cdm_property_kind { CDM_PROPERTY_ATTRIBUTE = 1, CDM_PROPERTY_RELATIONSHIP = 2 };
/* The attribute or relationship mappings: destination property name and value expression as
** written (NULL for a mapping without one). By position, or by property name (CDM_NOTFOUND). */
int cdm_context_property_mapping_count(cdm_context *ctx, enum cdm_property_kind kind, size_t *count);
int cdm_context_property_mapping_at(cdm_context *ctx, enum cdm_property_kind kind, size_t i, const char **name, const char **expression);
int cdm_context_property_mapping(cdm_context *ctx, enum cdm_property_kind kind, const char *name, const char **expression);

/* The source or destination model (CDM_STORE_SOURCE / CDM_STORE_DESTINATION), for the
** cdm_model_* introspection. Borrowed: owned by the migration, never freed by the host. */
int cdm_context_model(cdm_context *ctx, enum cdm_store_kind store, const cdm_model **model);

/* --- Core Data's default hooks, callable as `super` from any hook ----------------------------
** createDestinationInstancesForSourceInstance: make an instance of the mapping's destination
** entity, apply the attribute mappings, associate it with source. *out (may be NULL) is the
** new instance, NULL for a mapping without a destination entity. */
int cdm_context_default_create_destination_instances(cdm_context *ctx, cdm_object *source, cdm_object **out);
/* createRelationshipsForDestinationInstance: apply the relationship mappings to destination. */
int cdm_context_default_create_relationships(cdm_context *ctx, cdm_object *destination);

/* Makes a destination instance and sets its attributes from `fields` (flags: enum
** cdm_fields_flag) in one call; entity NULL means the current mapping's destination entity. When
** source is not NULL the new instance is associated with it for the current mapping. On a bad
** field the call fails naming it; the instance stays made. *out may be NULL. */
int cdm_context_create_instance_with_fields(cdm_context *ctx, const char *entity, const cdm_field *fields, size_t count,
                                            int flags, cdm_object *source, cdm_object **out);

/* --- Querying the stores (manager.sourceContext / destinationContext) ------------------------
** Fetches instances of `entity` (and its subentities unless flags has
** CDM_FETCH_EXCLUDE_SUBENTITIES) matching an NSPredicate ("name == %@ AND year > $min"; NULL for
** all), with `arguments` for its %@ (fields without a name, in order) and $variables (fields with
** a name). limit 0: no limit. *out is a cdm_list valid during the callback.
** The destination fetch sees every instance made so far in this migration — in any pass, also
** those not yet written — and lookups stay fast: a destination column a predicate compares gets
** an index for the rest of the migration (dropped before the store is handed over).
** Errors: CDM_NOTFOUND (unknown entity), CDM_EXPRESSION_SYNTAX (with the offset in the predicate),
** CDM_EXPRESSION_EVALUATION / CDM_INVALID_ARGUMENT (an unknown key, a missing argument), each
** naming the entity and the predicate. */
enum cdm_fetch_flag { CDM_FETCH_EXCLUDE_SUBENTITIES = 1 };
int cdm_context_fetch_destination(cdm_context *ctx, const char *entity, const char *predicate, const cdm_field *arguments,
                                  size_t argument_count, int flags, size_t limit, cdm_list **out);
int cdm_context_fetch_source(cdm_context *ctx, const char *entity, const char *predicate, const cdm_field *arguments,
                             size_t argument_count, int flags, size_t limit, cdm_list **out);
int cdm_context_count_destination(cdm_context *ctx, const char *entity, const char *predicate, const cdm_field *arguments,
                                  size_t argument_count, int flags, size_t *count);
int cdm_context_count_source(cdm_context *ctx, const char *entity, const char *predicate, const cdm_field *arguments,
                             size_t argument_count, int flags, size_t *count);

/* A sort descriptor (NSSortDescriptor with the default compare:): an attribute of the fetched
** entity and a direction (non-zero ascending). */
typedef struct cdm_sort_descriptor {
    const char *key;
    int ascending;
} cdm_sort_descriptor;

/* The general fetch: instances of `entity` in the source or the destination (store:
** CDM_STORE_SOURCE or CDM_STORE_DESTINATION), as cdm_context_fetch_source / _destination, ordered
** by `sort` (sort_count descriptors; sort may be NULL when sort_count is 0). Sorting runs in SQL:
** ORDER BY the attributes' columns, then Z_PK ascending. Without descriptors, and between ties,
** instances come in Z_PK order (the order they were made in; what the other fetches give too).
** Strings sort by Unicode code point, case-sensitively ("B" before "a"), as NSString's compare:
** does for text in one normalization form (docs/c-api.md has the details); null sorts first
** ascending. CDM_INVALID_ARGUMENT naming the descriptor's position for a key that is not a stored
** attribute of the entity (relationships and key paths are not sortable), CDM_MISUSE for a NULL
** key or array. */
int cdm_context_fetch(cdm_context *ctx, enum cdm_store_kind store, const char *entity, const char *predicate, const cdm_field *arguments,
                      size_t argument_count, const cdm_sort_descriptor *sort, size_t sort_count, int flags, size_t limit,
                      cdm_list **out);

int cdm_list_count(cdm_list *list, size_t *count);
/* The i-th instance (CDM_NOTFOUND out of range). */
int cdm_list_object_at(cdm_list *list, size_t i, cdm_object **object);
/* All of them as an array of *count handles owned by the list. */
int cdm_list_objects(cdm_list *list, cdm_object *const **objects, size_t *count);
/* Ends the list's and its instances' handles early (to keep memory flat in a long loop). */
void cdm_list_release(cdm_list *list);

/* --- Identities (NSManagedObjectID) -----------------------------------------------------------
** The instance a URI from cdm_object_uri names, source or destination (their store UUIDs differ).
** CDM_NOTFOUND when there is no such row, CDM_INVALID_ARGUMENT for text that is not such a URI or
** names another store. */
int cdm_context_instance_for_uri(cdm_context *ctx, const char *uri, cdm_object **out);
/* The same from cdm_object_id's parts, without text (for hot paths). */
int cdm_context_instance_with_id(cdm_context *ctx, enum cdm_store_kind store, const char *entity, int64_t primary_key, cdm_object **out);

/* --- Shared state (NSMigrationManager.userInfo) -----------------------------------------------
** Host pointers under string keys, shared by all policies and functions of one migration.
** Setting a key passes ownership of `pointer`: destroy(pointer) (if not NULL) is called exactly
** once — when the key is set again or removed (pointer NULL), when the migration ends (the
** manager clears its userInfo after every run, successful or not), when the migration is freed,
** or at once if the call fails. Get gives NULL for an absent key (not an error), CDM_MISMATCH
** for a value set by Swift code. */
int cdm_context_set_user_info(cdm_context *ctx, const char *key, void *pointer, void (*destroy)(void *pointer));
int cdm_context_get_user_info(cdm_context *ctx, const char *key, void **pointer);
/* Typed values under string keys in the same userInfo (what Core Data policies keep there:
** counters, names, flags, instances), shared by every policy, host function and pass of the run
** and emptied when the run ends. They are engine values, so value expressions read them too
** ($manager.userInfo.key). Setting a key replaces whatever it held (a host pointer is destroyed);
** cdm_context_set_user_info(ctx, key, NULL, NULL) removes it. text_length may be CDM_NUL_TERMINATED.
** An instance is kept as the instance itself (a NULL object stores null); reading it back gives
** a cdm_value of type CDM_VALUE_OBJECT whose cdm_value_object is valid in that callback.
** cdm_context_get_user_info_value: *value (valid during the callback; cdm_value_type tells the
** type) is NULL for an absent key (not an error); CDM_MISMATCH for a key holding a host pointer
** (and cdm_context_get_user_info gives CDM_MISMATCH for a typed value). */
int cdm_context_set_user_info_null(cdm_context *ctx, const char *key);
int cdm_context_set_user_info_int64(cdm_context *ctx, const char *key, int64_t value);
int cdm_context_set_user_info_double(cdm_context *ctx, const char *key, double value);
int cdm_context_set_user_info_bool(cdm_context *ctx, const char *key, int value);
int cdm_context_set_user_info_text(cdm_context *ctx, const char *key, const char *text, size_t text_length);
int cdm_context_set_user_info_object(cdm_context *ctx, const char *key, cdm_object *object);
int cdm_context_get_user_info_value(cdm_context *ctx, const char *key, cdm_value **value);

/* ---------------------------------------------------------------------------------------------
** Instances. `key` is an attribute or relationship name, or for getters a key path ("note.body",
** through to-one relationships; through a to-many, getters of collections). The *_at variants
** take an attribute index (cdm_model_attribute_index / cdm_object_attribute_index) and skip the
** name lookup — use them on hot paths.
**
** Getters: CDM_OK with *is_null = 1 (and a zero/NULL value) for a null value. is_null may be NULL.
** Each getter takes only its attribute types, otherwise CDM_MISMATCH:
**   int64: integer16/32/64    double: double, float    bool: boolean    date: date (seconds since
**   2001-01-01 UTC)    text: string, URI, decimal (as its exact text)    blob: binary, transformable
**   uuid: UUID (16 bytes).
** Text and blob pointers are owned by the library and valid until the same attribute of the same
** instance is read again or set, or the callback returns.
*/
int cdm_object_entity_name(cdm_object *object, const char **name);
int cdm_object_attribute_index(cdm_object *object, const char *attribute, int *index);
int cdm_object_attribute_type(cdm_object *object, const char *attribute, int *type);
/* Core Data's object ID URI (x-coredata://<store UUID>/<Entity>/p<pk>); valid during the callback. */
int cdm_object_uri(cdm_object *object, const char **uri);

int cdm_object_get_int64(cdm_object *object, const char *key, int64_t *value, int *is_null);
int cdm_object_get_double(cdm_object *object, const char *key, double *value, int *is_null);
int cdm_object_get_bool(cdm_object *object, const char *key, int *value, int *is_null);
int cdm_object_get_date(cdm_object *object, const char *key, double *value, int *is_null);
int cdm_object_get_text(cdm_object *object, const char *key, const char **text, size_t *length, int *is_null);
int cdm_object_get_blob(cdm_object *object, const char *key, const void **bytes, size_t *length, int *is_null);
int cdm_object_get_uuid(cdm_object *object, const char *key, unsigned char uuid[16], int *is_null);

int cdm_object_get_int64_at(cdm_object *object, int index, int64_t *value, int *is_null);
int cdm_object_get_double_at(cdm_object *object, int index, double *value, int *is_null);
int cdm_object_get_bool_at(cdm_object *object, int index, int *value, int *is_null);
int cdm_object_get_date_at(cdm_object *object, int index, double *value, int *is_null);
int cdm_object_get_text_at(cdm_object *object, int index, const char **text, size_t *length, int *is_null);
int cdm_object_get_blob_at(cdm_object *object, int index, const void **bytes, size_t *length, int *is_null);
int cdm_object_get_uuid_at(cdm_object *object, int index, unsigned char uuid[16], int *is_null);

/* Any value (attribute, relationship, key path) as a cdm_value, valid during the callback. */
int cdm_object_get_value(cdm_object *object, const char *key, cdm_value **value);

/* A to-one relationship (or key path ending in one): *target is NULL when it is empty. */
int cdm_object_get_object(cdm_object *object, const char *key, cdm_object **target);
/* A to-many relationship (or key path through one): an array of *count handles owned by the
** library, valid during the callback. */
int cdm_object_get_objects(cdm_object *object, const char *key, cdm_object *const **targets, size_t *count);

/* Setters. The attribute's type decides what it takes: int64/double/bool setters any numeric
** attribute (integer, decimal, double, float, boolean), text a string, URI, decimal or UUID
** ("8-4-4-4-12") attribute, date a date, blob a binary or transformable (or a 16-byte UUID),
** uuid a UUID attribute; otherwise CDM_MISMATCH. Every setter writes a transformable attribute:
** blob bytes as they are, any other value as its NSKeyedArchiver archive, as Core Data's default
** and Foundation's transformers keep it (an attribute behind the app's own transformer takes
** bytes only: CDM_INVALID_ARGUMENT otherwise). text_length may be CDM_NUL_TERMINATED. */
int cdm_object_set_null(cdm_object *object, const char *key);
int cdm_object_set_int64(cdm_object *object, const char *key, int64_t value);
int cdm_object_set_double(cdm_object *object, const char *key, double value);
int cdm_object_set_bool(cdm_object *object, const char *key, int value);
int cdm_object_set_date(cdm_object *object, const char *key, double seconds_since_2001);
int cdm_object_set_text(cdm_object *object, const char *key, const char *text, size_t text_length);
int cdm_object_set_blob(cdm_object *object, const char *key, const void *bytes, size_t length);
int cdm_object_set_uuid(cdm_object *object, const char *key, const unsigned char uuid[16]);

int cdm_object_set_null_at(cdm_object *object, int index);
int cdm_object_set_int64_at(cdm_object *object, int index, int64_t value);
int cdm_object_set_double_at(cdm_object *object, int index, double value);
int cdm_object_set_bool_at(cdm_object *object, int index, int value);
int cdm_object_set_date_at(cdm_object *object, int index, double seconds_since_2001);
int cdm_object_set_text_at(cdm_object *object, int index, const char *text, size_t text_length);
int cdm_object_set_blob_at(cdm_object *object, int index, const void *bytes, size_t length);
int cdm_object_set_uuid_at(cdm_object *object, int index, const unsigned char uuid[16]);

/* Relationships: set a to-one (target may be NULL), add to a to-many (appended when ordered). */
int cdm_object_set_object(cdm_object *object, const char *key, cdm_object *target);
int cdm_object_add_object(cdm_object *object, const char *key, cdm_object *target);
/* Removes target from a to-many (harmless when it is not there). */
int cdm_object_remove_object(cdm_object *object, const char *key, cdm_object *target);
/* Inserts target at `index` of an ordered to-many (clamped to its count; a member already there
** moves). The engine has no positional insert, so this rewrites the ordered relationship: O(n)
** per call — append with cdm_object_add_object where order of arrival is enough. For an
** unordered to-many the index is meaningless and this is cdm_object_add_object. */
int cdm_object_insert_object(cdm_object *object, const char *key, cdm_object *target, size_t index);

/* The instance's identity: which store (enum cdm_store_kind; CDM_STORE_OTHER for a cdm_store's
** instances), its entity (an interned string) and its primary key. Any of the outputs may be NULL. */
int cdm_object_id(cdm_object *object, int *store, const char **entity, int64_t *primary_key);

/* All attribute values in one call (dictionaryWithValuesForKeys:), in index order: fills
** min(capacity, count) fields and sets *count to the entity's attribute count (capacity 0 and
** fields NULL just ask for the count). Names are interned; text and bytes point into one block
** owned by the handle, each NUL-terminated, valid until the next cdm_object_get_fields on the same
** handle or the end of its callback. */
int cdm_object_get_fields(cdm_object *object, cdm_field *fields, size_t capacity, size_t *count);
/* Sets attributes from fields by name or index (setValuesForKeysWithDictionary:), converting as
** the engine does (numbers among numeric types, text to a decimal or UUID, …). flags: enum
** cdm_fields_flag. Stops at the first bad field, naming it (fields before it stay set):
** CDM_NOTFOUND unknown name/index, CDM_MISMATCH a value the attribute cannot take. */
int cdm_object_set_fields(cdm_object *object, const cdm_field *fields, size_t count, int flags);

/* The instance's attributes as a JSON object: {"entity": name, "uri": …, "attributes": {name:
** value}} with null, numbers, booleans, strings; dates as ISO 8601 text, binary as base64, UUIDs
** in 8-4-4-4-12 form, decimals as their text. Caller frees *json with cdm_free. */
int cdm_object_to_json(cdm_object *object, char **json);

/* Keeps an instance handle beyond its callback (Core Data policies keep managed objects across
** calls, e.g. a name → Author dictionary made in createDestinationInstances and used in
** createRelationships). The same handle (the host's copies stay good) then stays valid in every
** later callback and pass of the same run, on the same thread, until cdm_object_release or the end
** of the run (cdm_migration_run / _run_in_place returning, successful or not); afterwards every
** call with it gives CDM_MISUSE. Retains count: each is balanced by one cdm_object_release. What
** a retained handle hands out (strings, related instances, values) is valid during the callback
** that asked for it, as for any handle. Errors of calls on it go to the running callback's
** context. On a cdm_store's instances (valid until the store is closed) it does nothing.
** CDM_MISUSE for a NULL or stale handle (retain it in the callback that got it). */
int cdm_object_retain(cdm_object *object);
/* Ends a handle's validity before its callback returns (to keep memory flat when one callback
** touches very many instances), or undoes one cdm_object_retain — the last one ends the handle.
** A cdm_list (cast to cdm_object *) is ended too, its instances staying valid. Harmless on NULL or
** stale handles. */
void cdm_object_release(cdm_object *object);

/* ---------------------------------------------------------------------------------------------
** Values (expression results, host function arguments and results).
*/
/* The type (enum cdm_value_type); -1 for a NULL or stale handle. */
int cdm_value_type(cdm_value *value);
/* Numbers convert among themselves (int64 truncates a double); otherwise CDM_MISMATCH. */
int cdm_value_int64(cdm_value *value, int64_t *out);
int cdm_value_double(cdm_value *value, double *out);
int cdm_value_bool(cdm_value *value, int *out);
int cdm_value_date(cdm_value *value, double *seconds_since_2001);
/* Strings, URIs and decimals; valid during the callback. */
int cdm_value_text(cdm_value *value, const char **text, size_t *length);
int cdm_value_blob(cdm_value *value, const void **bytes, size_t *length);
int cdm_value_uuid(cdm_value *value, unsigned char uuid[16]);
int cdm_value_object(cdm_value *value, cdm_object **object);
/* A collection's elements (a single value counts as one, null as none). */
int cdm_value_count(cdm_value *value, size_t *count);
int cdm_value_element_at(cdm_value *value, size_t i, cdm_value **element);
/* Any value as JSON text (instances as their URI). Caller frees *json with cdm_free. */
int cdm_value_to_json(cdm_value *value, char **json);

/* Setting a host function's result (only the `result` handle is writable: CDM_MISUSE otherwise). */
int cdm_value_set_null(cdm_value *value);
int cdm_value_set_int64(cdm_value *value, int64_t v);
int cdm_value_set_double(cdm_value *value, double v);
int cdm_value_set_bool(cdm_value *value, int v);
int cdm_value_set_date(cdm_value *value, double seconds_since_2001);
int cdm_value_set_text(cdm_value *value, const char *text, size_t text_length);
/* An exact decimal number given as plain decimal text ("-12.50", "3e-2"), for decimal attributes;
** other text gives CDM_MISMATCH. */
int cdm_value_set_decimal(cdm_value *value, const char *text);
int cdm_value_set_blob(cdm_value *value, const void *bytes, size_t length);
int cdm_value_set_object(cdm_value *value, cdm_object *object);

/* ---------------------------------------------------------------------------------------------
** Stores, for hosts that make source stores (tests, generators). Instances made here are
** cdm_object handles valid until the store is closed (or cdm_object_release), on the creating thread.
*/
typedef struct cdm_store cdm_store;

/* Creates a new empty store in Core Data's layout for `model`. Always sets *out; caller closes it
** with cdm_store_close. CDM_MIGRATION_MANAGER_DESTINATION_STORE/CDM_SQLITE/CDM_IO on failure. */
int cdm_store_create(const cdm_model *model, const char *path, cdm_store **out);
int cdm_store_insert(cdm_store *store, const char *entity, cdm_object **out);
/* Writes everything inserted and changed so far, with Core Data's bookkeeping, and commits. */
int cdm_store_save(cdm_store *store);
/* Closes the store (unsaved changes are rolled back) and frees the handle and its instances. NULL is harmless. */
void cdm_store_close(cdm_store *store);

int cdm_store_errcode(const cdm_store *store);
const char *cdm_store_errmsg(const cdm_store *store);
const cdm_error *cdm_store_error(const cdm_store *store);

/* Reading an existing store through its model, as a test checks what a migration wrote (Core
** Data: an NSPersistentContainer opened with NSReadOnlyPersistentStoreOption, and NSFetchRequest).
** Opens the store at path read-only: with `model`, which must be the store's version
** (CDM_INCOMPATIBLE_VERSION_HASH naming the entities that differ otherwise), or with model NULL
** through the model the store keeps of itself in its model cache (Z_MODELCACHE, which Core Data
** writes into every store since macOS 10.12 / iOS 10, and cdmigrate into every store it writes).
** Nothing is written; -wal/-shm files SQLite makes beside a store that had none go when it closes.
** Always sets *out; caller closes it with cdm_store_close. Errors: CDM_IO (no such file),
** CDM_SQLITE (not an SQLite database), CDM_MIGRATION_MISSING_SOURCE_MODEL (model NULL and an
** empty model cache: pass a model, e.g. cdm_model_from_store's), CDM_INVALID_MODEL (a damaged
** cache), CDM_INCOMPATIBLE_VERSION_HASH (not a Core Data store, or another version), CDM_MISUSE
** (NULL path or out, a failed model). cdm_store_insert and cdm_store_insert_json on it give
** CDM_INVALID_ARGUMENT (read-only). */
int cdm_store_open(const char *path, const cdm_model *model, cdm_store **out);
/* The store's model (the one given to cdm_store_create / cdm_store_open, or its cached one), for
** the cdm_model_* introspection. Borrowed: owned by the store, valid until cdm_store_close. */
int cdm_store_model(cdm_store *store, const cdm_model **model);
/* Fetches instances of `entity` (and its subentities unless flags has
** CDM_FETCH_EXCLUDE_SUBENTITIES) matching an NSPredicate (NULL for all) with its arguments, sorted
** by `sort` (sort_count descriptors, as cdm_context_fetch; Z_PK order without them and between
** ties), at most `limit` (0: no limit). *out is a cdm_list whose instances are cdm_object handles
** valid until the store is closed (cdm_list_release ends them early, to keep memory flat when
** reading many). Read them with the cdm_object_* getters: attributes, a to-one relationship with
** cdm_object_get_object (the related instance, its attributes read on first use; NULL when
** empty), a to-many with cdm_object_get_objects (ordered ones in their order). Errors:
** CDM_NOTFOUND (unknown entity), CDM_EXPRESSION_SYNTAX (with cdm_error_offset in the predicate),
** CDM_INVALID_ARGUMENT (an unknown key, a missing argument, a sort key that is not a stored
** attribute), each naming the entity; CDM_MISUSE (NULL store, entity or out). */
int cdm_store_fetch(cdm_store *store, const char *entity, const char *predicate, const cdm_field *arguments,
                    size_t argument_count, const cdm_sort_descriptor *sort, size_t sort_count, int flags, size_t limit,
                    cdm_list **out);
/* How many instances cdm_store_fetch would give without a limit; the same errors. */
int cdm_store_count(cdm_store *store, const char *entity, const char *predicate, const cdm_field *arguments,
                    size_t argument_count, int flags, size_t *count);
/* Inserts the instances a JSON description gives (docs/ci.md, "The objects file": {"objects": [{"entity":
** "Author", "id": "ann", "values": {"name": "Ann"}}, {"entity": "Book", "values": {"author":
** "ann"}}]}) and relates them; cdm_store_save writes them. With cdm_store_create this makes a
** seed store of a model version, as `cdmigrate create-store` does. Errors: CDM_INVALID_JSON,
** CDM_INVALID_ARGUMENT naming the JSON path of the value at fault (cdm_error_path: an unknown
** entity or property, a value of the wrong type, an id no object has); the instances inserted
** before it stay, unsaved. */
int cdm_store_insert_json(cdm_store *store, const char *json);
/* Checks every instance of the store against its model as Core Data's save validates them (and a
** migration its destination): required attributes and relationships present, to-many counts
** within bounds, numbers within their type and min/max. Unsaved changes are written first. One
** failure gives its code (CDM_VALIDATION_MISSING_MANDATORY_PROPERTY, …, with cdm_error_entity,
** cdm_error_primary_key and cdm_error_key naming it), several CDM_VALIDATION_MULTIPLE_ERRORS with
** each in cdm_error_at. `cdmigrate create-store` validates the stores it makes. */
int cdm_store_validate(cdm_store *store);

/* ---------------------------------------------------------------------------------------------
** Store metadata: what a store says about itself, read without a model and without migrating
** (Core Data's metadataForPersistentStore(ofType:at:)), and whether a model or a version of a model
** set can open it (isConfiguration(withName:compatibleWithStoreMetadata:),
** mergedModel(from:forStoreMetadata:)). The store is opened read-only and closed again.
** Strings and hashes handed out belong to the handle and stay valid until it is freed.
*/
typedef struct cdm_store_metadata cdm_store_metadata;

/* One entity the store names: in its version hashes (NSStoreModelVersionHashes) or in Z_PRIMARYKEY. */
typedef struct cdm_store_entity_info {
    const char *name;
    const char *superentity;       /* NULL for a root entity or one Z_PRIMARYKEY does not list */
    int entity_number;             /* Z_ENT; 0 when Z_PRIMARYKEY does not list the entity */
    int64_t row_count;             /* rows of this entity itself; -1 when Z_PRIMARYKEY does not list it */
    const uint8_t *version_hash;   /* the store's hash (32 bytes), NULL when it records none */
    size_t version_hash_length;
} cdm_store_entity_info;

/* One entity whose version hash differs between a store and a model. */
typedef struct cdm_version_difference {
    const char *entity;
    const uint8_t *store_hash;     /* NULL: the entity is not in the store */
    size_t store_hash_length;
    const uint8_t *model_hash;     /* NULL: the entity is not in the model */
    size_t model_hash_length;
} cdm_version_difference;

/* Reads the metadata (Z_METADATA) and entities with their row counts (Z_PRIMARYKEY) of the store at
** path. Always sets *out; caller frees with cdm_store_metadata_free. CDM_IO for a missing or
** unreadable file, CDM_INCOMPATIBLE_VERSION_HASH for a file that is not a Core Data SQLite store,
** CDM_MIGRATION_MANAGER_SOURCE_STORE for malformed metadata, CDM_MISUSE for a NULL path. */
int cdm_store_metadata_read(const char *path, cdm_store_metadata **out);
void cdm_store_metadata_free(cdm_store_metadata *metadata);
int cdm_store_metadata_errcode(const cdm_store_metadata *metadata);
const char *cdm_store_metadata_errmsg(const cdm_store_metadata *metadata);
const cdm_error *cdm_store_metadata_error(const cdm_store_metadata *metadata);

/* Z_METADATA.Z_UUID (NSStoreUUIDKey) and NSStoreType ("SQLite"). */
int cdm_store_metadata_uuid(const cdm_store_metadata *metadata, const char **uuid);
int cdm_store_metadata_type(const cdm_store_metadata *metadata, const char **type);
/* 1 when Z_PLIST is empty (macOS Notes writes such stores): the version cannot be checked. */
int cdm_store_metadata_is_empty(const cdm_store_metadata *metadata, int *empty);
/* NSStoreModelVersionIdentifiers, in order. CDM_NOTFOUND for an index out of range. */
int cdm_store_metadata_identifier_count(const cdm_store_metadata *metadata, size_t *count);
int cdm_store_metadata_identifier_at(const cdm_store_metadata *metadata, size_t index, const char **identifier);
/* The entities, in Core Data's name order. CDM_NOTFOUND for an index out of range. */
int cdm_store_metadata_entity_count(const cdm_store_metadata *metadata, size_t *count);
int cdm_store_metadata_entity_at(const cdm_store_metadata *metadata, size_t index, cdm_store_entity_info *info);
/* Whether model can open the store without a migration (*compatible 1 or 0), and how many entities'
** version hashes differ; cdm_store_metadata_difference_at reads them (name order) until the next
** check. Empty metadata (an empty Z_PLIST) is compatible with no model; every model entity is
** then a difference without a store hash. */
int cdm_store_metadata_check_model(cdm_store_metadata *metadata, const cdm_model *model, int *compatible, size_t *difference_count);
int cdm_store_metadata_difference_at(const cdm_store_metadata *metadata, size_t index, cdm_version_difference *difference);
/* The version of the model set at model_set_path (an .xcdatamodeld or a folder of JSON models) the
** store was written with: *version is its name, or NULL when no version matches. CDM_IO and
** CDM_INVALID_MODEL when the set cannot be read. */
int cdm_store_metadata_version_in(cdm_store_metadata *metadata, const char *model_set_path, const char **version);

/* ---------------------------------------------------------------------------------------------
** Collections as a function's result: what a relationship mapping takes from a host function or
** policy method — one instance (cdm_value_set_object), none (cdm_value_set_null), or a collection,
** ordered as appended (an ordered to-many keeps that order), possibly empty. Only the `result`
** handle is writable (CDM_MISUSE otherwise).
*/
/* Makes *value an empty collection (CDM_VALUE_COLLECTION). */
int cdm_value_set_collection(cdm_value *value);
/* Appends an instance to the collection *value holds (CDM_MISMATCH when it holds no collection:
** call cdm_value_set_collection first). A NULL object appends nothing. */
int cdm_value_append_object(cdm_value *value, cdm_object *object);
/* Appends a copy of another value (an argument, an element, an expression's result; a collection
** is appended as one element). */
int cdm_value_append(cdm_value *value, cdm_value *element);
/* Appends a null element to the collection *value holds and gives a writable handle to it, valid
** until the callback returns: a cdm_value_set_* on it sets that element (a text, a number, a
** nested collection…), as a policy method returns `@[url, @"two", @3]` for a transformable
** attribute. CDM_MISMATCH when *value holds no collection. */
int cdm_value_append_new(cdm_value *value, cdm_value **element);

/* ---------------------------------------------------------------------------------------------
** Mapping models kept apart from the model set (docs/c-api.md, "Progressive migration").
** Each function is its namesake with mapping_dirs: a NULL-terminated array of folders (NULL for
** none) searched, with their subfolders, for mapping models (.xcmappingmodel, *.mapping.json,
** .cdm) besides those beside the model set, as `cdmigrate plan --models M --mappings DIR`.
** CDM_IO for a folder that cannot be read; CDM_INVALID_ARGUMENT for more than 1024 folders. */
int cdm_chain_plan_with_mappings(const char *models_path, const char *const *mapping_dirs, const char *store_path,
                                 const char *target_version, char **plan_json);
int cdm_migrate_chain_with_mappings(const char *models_path, const char *const *mapping_dirs, const char *store_path,
                                    const char *target_version, const char *destination_path, char **report_json);
int cdm_model_set_json_with_mappings(const char *models_path, const char *const *mapping_dirs, char **set_json);
int cdm_migration_new_chain_with_mappings(const char *models_path, const char *const *mapping_dirs,
                                          const char *target_version, cdm_migration **out);

/* ---------------------------------------------------------------------------------------------
** Fused steps (docs/chains.md, "Fused steps"). A chain fuses consecutive steps without policies
** into one pass (their mapping models composed into one, from the first step's model to the last
** one's) where that gives the store the step-by-step run gives, so the store is copied once; a
** step that cannot be composed exactly runs on its own. The plan JSON's "passes" ([{"from", "to",
** "steps": [index in "steps"], "fused", "notFusedWithNext": why, or null}]) and each run step's
** "fusedSteps" ([{"from", "to", "inferred", "mappingModels"}], empty for a step of its own) say
** which steps were fused. Fusing is the default; fuse 0 runs every step on its own. */

/* Whether the runs of a chain handle fuse steps (fuse non-zero, the default) or run every step on
** its own (0; `cdmigrate migrate --no-fuse`). CDM_MISUSE for a handle that is not a chain, or
** from a callback. */
int cdm_migration_set_fuse_steps(cdm_migration *migration, int fuse);
/* cdm_chain_plan_with_mappings, with "passes" as a run with fuse (non-zero) or without (0) makes them. */
int cdm_chain_plan_with_options(const char *models_path, const char *const *mapping_dirs, const char *store_path,
                                const char *target_version, int fuse, char **plan_json);
/* cdm_migrate_chain_with_mappings, fusing steps (fuse non-zero; what cdm_migrate_chain does) or not. */
int cdm_migrate_chain_with_options(const char *models_path, const char *const *mapping_dirs, const char *store_path,
                                   const char *target_version, const char *destination_path, int fuse,
                                   char **report_json);

/* ---------------------------------------------------------------------------------------------
** What a policy sees of its migration (NSMigrationManager, NSEntityMapping, NSPropertyMapping)
** beyond the functions above: the models' version identifiers (cdm_context_model lends the
** models), the mapping model of the pass running, the current entity mapping's type, a property
** mapping's userInfo, and changing a property mapping's value expression.
*/
/* The model's version identifier (Core Data: versionIdentifiers), or NULL when it has none. The
** string lives as long as the library. */
int cdm_model_version_identifier(const cdm_model *model, const char **identifier);
/* An entity's version hash (Core Data: NSEntityDescription.versionHash, the entity's value in
** NSManagedObjectModel.entityVersionHashesByName): SHA-256 (32 bytes) over what Core Data hashes, the
** bytes a store's NSStoreModelVersionHashes records for the entity. *hash lives as long as the model
** handle. CDM_NOTFOUND when the model has no such entity. */
int cdm_model_entity_version_hash(const cdm_model *model, const char *entity, const uint8_t **hash, size_t *length);
/* The mapping model of the pass running (Core Data: the manager's mappingModel): its name (NULL
** when it has none), and its entity mappings' names in run order. Strings live until the callback
** returns. CDM_NOTFOUND for an index out of range. */
int cdm_context_mapping_model_name(cdm_context *ctx, const char **name);
int cdm_context_entity_mapping_count(cdm_context *ctx, size_t *count);
int cdm_context_entity_mapping_at(cdm_context *ctx, size_t i, const char **name);
/* The source and destination entity names of the mapping model's entity mapping at index i
** (Core Data: entityMappings[i].sourceEntityName, destinationEntityName); NULL where the mapping
** has none (an add mapping has no source, a remove mapping no destination). Strings live until the
** callback returns. CDM_NOTFOUND for an index out of range. */
int cdm_context_entity_mapping_entities_at(cdm_context *ctx, size_t i, const char **source, const char **destination);
/* The current entity mapping's type (Core Data: mappingType): "undefined", "custom", "add",
** "remove", "copy" or "transform". The string lives as long as the library. */
int cdm_context_entity_mapping_type(cdm_context *ctx, const char **type);
/* The value under key in the userInfo of the current entity mapping's property mapping for name;
** *value is NULL when there is no such key. Read-only; valid until the callback returns.
** CDM_NOTFOUND when the entity mapping has no such property mapping. */
int cdm_context_property_mapping_user_info_value(cdm_context *ctx, enum cdm_property_kind kind, const char *name,
                                                 const char *key, cdm_value **value);
/* The number of entries in that userInfo, and entry i in key order (key and value valid until the
** callback returns). */
int cdm_context_property_mapping_user_info_count(cdm_context *ctx, enum cdm_property_kind kind, const char *name, size_t *count);
int cdm_context_property_mapping_user_info_value_at(cdm_context *ctx, enum cdm_property_kind kind, const char *name, size_t i,
                                                    const char **key, cdm_value **value);
/* Replaces the value expression of the current entity mapping's property mapping for name (Core
** Data: setting NSPropertyMapping.valueExpression, typically in begin before the default runs).
** expression is in the syntax of mapping models; NULL means no value (the destination's default
** stays). The change applies to every instance evaluated after it, by any path, for the rest of
** the pass; the declared expression is back when the pass ends, so the next pass or run, and the
** cdm_mapping the migration was made with, never see it. cdm_context_property_mapping reads the
** expression as set. CDM_EXPRESSION_SYNTAX (with the offset in expression) when it does not
** parse, the mapping then unchanged; CDM_NOTFOUND when there is no such property mapping. */
int cdm_context_set_property_mapping_expression(cdm_context *ctx, enum cdm_property_kind kind, const char *name,
                                                const char *expression);

/* ---------------------------------------------------------------------------------------------
** The command line. cdm_command_line_run runs the `cdmigrate` command (docs/cli.md) in the
** calling process, exactly as the executable does: argv is the program's name then its arguments
** (as main gets them), output goes to the process's standard output and standard error, and the
** result is the exit status docs/cli.md lists (0, 1, 64, 65, 66, 74, or 128 + the signal that
** cancelled it: while a command runs, SIGINT, SIGTERM and SIGHUP cancel it cleanly; the host's
** handlers are back when it returns). The function is in the shared library (libcdmigrate.so)
** only: the static archive links no command line. options may be NULL (options_size 0).
*/
/* Loads the policies `name` (a --policies value) onto `migration`, a handle the command made, with
** cdm_migration_register_policy / _register_function. Returns CDM_OK when it registered them,
** CDM_NOTFOUND when `name` is not the host's (the command then loads it as a shared library
** exporting cdm_register_policies), any other code to fail the command, with *message (may stay
** NULL; valid until the next call) saying why. Called for every handle a command makes. */
typedef int (*cdm_command_line_policy_loader)(void *user, const char *name, cdm_migration *migration, const char **message);
typedef struct cdm_command_line_options {
    /* The program and leading arguments a fleet run (`migrate --jobs`/`--out-dir`) starts each
    ** child with, before the one-store command; NULL (count 0) starts this process's executable. */
    const char *const *child_command;
    size_t child_command_count;
    cdm_command_line_policy_loader load_policies; /* NULL: every --policies value is a shared library */
    void *user;                                   /* passed to load_policies */
} cdm_command_line_options;
int cdm_command_line_run(int argc, const char *const *argv, const cdm_command_line_options *options, size_t options_size);

/* A CDM_VALUE_DICTIONARY value (a transformable attribute whose keyed archive holds an
** NSDictionary, as Core Data's valueForKey: hands it over): its entry count and entry i's key or
** value (i < count, in archive order) as read-only handles valid as long as the value's.
** CDM_MISMATCH for a value of another type, CDM_NOT_FOUND for i out of range. */
int cdm_value_dictionary_count(cdm_value *value, size_t *count);
int cdm_value_dictionary_key_at(cdm_value *value, size_t i, cdm_value **key);
int cdm_value_dictionary_value_at(cdm_value *value, size_t i, cdm_value **entry_value);

/* Dictionaries and other composite values a host makes: what a policy method returns, or a policy
** sets on an instance, for a transformable attribute whose app keeps an NSDictionary (an app's
** `[Int: URL]`); the store gets its NSKeyedArchiver archive, as Core Data's transformer writes it.
** cdm_value_set_dictionary makes a writable *value an empty dictionary (CDM_VALUE_DICTIONARY).
** cdm_value_dictionary_add_new adds an entry whose key and value are null and gives writable
** handles to both, valid as long as *value's: cdm_value_set_text/_int64/… on *key (a string,
** number, date, URI, UUID or data; NSDictionary takes no nil key), cdm_value_set_* on
** *entry_value (nested: cdm_value_set_collection, cdm_value_set_dictionary). A null key, or a key
** given twice, is refused (CDM_INVALID_ARGUMENT naming the attribute) when the value is stored.
** CDM_MISMATCH when *value holds no dictionary; CDM_MISUSE for a value that is not writable (an
** argument, an expression's result). */
int cdm_value_set_dictionary(cdm_value *value);
int cdm_value_dictionary_add_new(cdm_value *value, cdm_value **key, cdm_value **entry_value);
/* A URL (CDM_VALUE_URI; text_length as cdm_value_set_text's): an NSURL in an archived dictionary
** or array (`[Int: URL]`), where cdm_value_set_text gives an NSString. */
int cdm_value_set_uri(cdm_value *value, const char *text, size_t text_length);
/* A writable null value for building what cdm_object_set_value sets (a dictionary, an array of
** plain values), valid as long as the handles `object` hands out (its callback, or its store). */
int cdm_object_new_value(cdm_object *object, cdm_value **value);
/* Sets an attribute from any value handle (setValue:forKey:): a built value, an argument, a
** dictionary or collection element, another instance's value. A transformable attribute keeps the
** value's keyed archive (docs/model-format.md); other attributes convert as the typed setters do.
** CDM_NOT_FOUND for a key the entity lacks, CDM_MISMATCH for a relationship's key or a value the
** attribute cannot take, CDM_INVALID_ARGUMENT for what no archive holds. */
int cdm_object_set_value(cdm_object *object, const char *key, cdm_value *value);

#ifdef __cplusplus
}
#endif
#endif /* CDMIGRATE_H */
