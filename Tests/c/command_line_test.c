/* cdm_command_line_run: the `cdmigrate` command line inside a C host — its output on the process's
** standard output and error, its exit codes, and a host loader for --policies (the hook Python's
** entry point uses), with the shared library only (the static archive has no command line). */
#include "scratch.h"
#include <fcntl.h>
#include <stdlib.h>

static const char *people =
    "{\"name\": \"People\", \"versionIdentifier\": \"1\", \"entities\": [{\"name\": \"Person\", \"attributes\": ["
    "{\"name\": \"name\", \"type\": \"string\"}, {\"name\": \"age\", \"type\": \"integer64\"}]}]}";
static const char *people2 =
    "{\"name\": \"People\", \"versionIdentifier\": \"2\", \"entities\": [{\"name\": \"Human\", \"attributes\": ["
    "{\"name\": \"name\", \"type\": \"string\"}, {\"name\": \"age\", \"type\": \"integer64\"}]}]}";
static const char *mapping =
    "{\"entityMappings\": [{\"name\": \"PersonToHuman\", \"sourceEntity\": \"Person\", \"destinationEntity\": \"Human\", "
    "\"policy\": \"Birthday\", \"predicate\": \"TRUEPREDICATE\", \"attributeMappings\": {\"name\": \"$source.name\", \"age\": \"$source.age\"}}]}";

static void write_file(const char *path, const char *text) {
    FILE *file = fopen(path, "w");
    if (!file) { perror(path); exit(1); }
    fputs(text, file);
    fclose(file);
}

/* What a run printed on each stream (the last run's; NUL-terminated). */
static char out_text[65536], err_text[65536];

static void read_into(const char *path, char *buffer, size_t size) {
    FILE *file = fopen(path, "r");
    size_t n = file ? fread(buffer, 1, size - 1, file) : 0;
    buffer[n] = 0;
    if (file) fclose(file);
}

/* Runs the command with standard output and error sent to files, then reads them back. */
static int run(int argc, const char *const *argv, const cdm_command_line_options *options) {
    char *out_path = path_in_dir("out.txt"), *err_path = path_in_dir("err.txt");
    fflush(stdout);
    fflush(stderr);
    int saved_out = dup(1), saved_err = dup(2);
    int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600), err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(out, 1);
    dup2(err, 2);
    close(out);
    close(err);
    int status = cdm_command_line_run(argc, argv, options, options ? sizeof *options : 0);
    dup2(saved_out, 1);
    dup2(saved_err, 2);
    close(saved_out);
    close(saved_err);
    read_into(out_path, out_text, sizeof out_text);
    read_into(err_path, err_text, sizeof err_text);
    return status;
}

/* The host's policy: every Human is a year older. */
static int birthday(cdm_context *ctx, cdm_object *source, void *user) {
    (void)user;
    cdm_object *human = NULL;
    int64_t age = 0;
    int is_null = 0;
    const char *name = NULL;
    size_t length = 0;
    int rc = cdm_context_create_instance(ctx, "Human", &human);
    if (rc == CDM_OK) rc = cdm_object_get_text(source, "name", &name, &length, &is_null);
    if (rc == CDM_OK) rc = cdm_object_set_text(human, "name", name, length);
    if (rc == CDM_OK) rc = cdm_object_get_int64(source, "age", &age, &is_null);
    if (rc == CDM_OK) rc = cdm_object_set_int64(human, "age", age + 1);
    if (rc == CDM_OK) rc = cdm_context_associate(ctx, source, human);
    return rc;
}

static int loads;

/* The host's --policies loader: "birthday" is the host's, "broken" fails, anything else is not the host's. */
static int loader(void *user, const char *name, cdm_migration *migration, const char **message) {
    loads++;
    CHECK(user == &loads);
    if (strcmp(name, "broken") == 0) { *message = "no module named broken"; return CDM_IO; }
    if (strcmp(name, "birthday") != 0) return CDM_NOTFOUND;
    cdm_policy policy;
    memset(&policy, 0, sizeof policy);
    policy.create_destination_instances = birthday;
    return cdm_migration_register_policy(migration, "Birthday", &policy, sizeof policy, NULL, NULL);
}

int main(void) {
    if (!scratch_begin("command-line")) return 1;
    char v1[512], v2[512], map[512], store[512];
    snprintf(v1, sizeof v1, "%s", path_in_dir("v1.json"));
    snprintf(v2, sizeof v2, "%s", path_in_dir("v2.json"));
    snprintf(map, sizeof map, "%s", path_in_dir("map.json"));
    snprintf(store, sizeof store, "%s", path_in_dir("people.sqlite"));
    write_file(v1, people);
    write_file(v2, people2);
    write_file(map, mapping);
    cdm_model *model = NULL;
    cdm_store *s = NULL;
    cdm_object *anna = NULL;
    CHECK_RC(cdm_model_from_json(people, &model), CDM_OK);
    CHECK_RC(cdm_store_create(model, store, &s), CDM_OK);
    CHECK_RC(cdm_store_insert(s, "Person", &anna), CDM_OK);
    CHECK_RC(cdm_object_set_text(anna, "name", "Anna", CDM_NUL_TERMINATED), CDM_OK);
    CHECK_RC(cdm_object_set_int64(anna, "age", 30), CDM_OK);
    CHECK_RC(cdm_store_save(s), CDM_OK);
    cdm_store_close(s);
    cdm_model_free(model);

    /* Help on standard output, exit 0; a wrong flag is 64 with the message on standard error. */
    const char *help[] = {"cdmigrate", "--help"};
    CHECK_RC(run(2, help, NULL), 0);
    CHECK_HAS(out_text, "migrate");
    CHECK_HAS(out_text, "Exit codes");
    const char *bogus[] = {"cdmigrate", "migrate", "--bogus"};
    CHECK_RC(run(3, bogus, NULL), 64);
    CHECK_HAS(err_text, "Error: ");
    CHECK_RC(cdm_command_line_run(0, NULL, NULL, 0), 64);
    cdm_command_line_options wrong_size = {0};
    CHECK_RC(cdm_command_line_run(2, help, &wrong_size, 3), 64);

    /* A missing model file: 74 as the executable says. */
    const char *missing[] = {"cdmigrate", "validate", "--source-model", path_in_dir("none.json"), "--destination-model", v2, "--mapping", map};
    CHECK_RC(run(8, missing, NULL), 74);

    /* The mapping names a policy: without it the migration fails (1, naming it) and writes nothing. */
    char *out1 = path_in_dir("out1.sqlite");
    const char *plain[] = {"cdmigrate", "migrate", store, "--to", out1, "--source-model", v1, "--destination-model", v2, "--mapping", map};
    CHECK_RC(run(11, plain, NULL), 1);
    CHECK_HAS(err_text, "Birthday");
    CHECK(access(out1, F_OK) != 0);

    /* With the host's loader: the policy runs, the loader is called once per migration handle. */
    cdm_command_line_options options = {0};
    options.load_policies = loader;
    options.user = &loads;
    char *out2 = path_in_dir("out2.sqlite");
    const char *hosted[] = {"cdmigrate", "migrate", store, "--to", out2, "--json", "--policies", "birthday",
                            "--source-model", v1, "--destination-model", v2, "--mapping", map};
    CHECK_RC(run(14, hosted, &options), 0);
    CHECK(loads == 1);
    CHECK_HAS(out_text, "\"Human\": 1");

    /* The loader's failure fails the command with its code's exit status and its message. */
    char *out3 = path_in_dir("out3.sqlite");
    const char *broken[] = {"cdmigrate", "migrate", store, "--to", out3, "--policies", "broken",
                            "--source-model", v1, "--destination-model", v2, "--mapping", map};
    CHECK_RC(run(13, broken, &options), 74);
    CHECK_HAS(err_text, "no module named broken");
    CHECK(access(out3, F_OK) != 0);

    /* A value the loader declines is a shared library, as for the executable. */
    const char *library[] = {"cdmigrate", "validate", "--policies", path_in_dir("libnone.so"),
                             "--source-model", v1, "--destination-model", v2, "--mapping", map};
    CHECK_RC(run(10, library, &options), 74);
    CHECK_HAS(err_text, "policy library");
    return scratch_end("command_line_test: ");
}
