#include <jansson.h>
// jansson's reference counting and type tests are static inline functions or macros;
// these wrappers give Swift something it can call.
static inline void cdm_json_decref(json_t *json) { json_decref(json); }
static inline json_t *cdm_json_incref(json_t *json) { return json_incref(json); }
static inline int cdm_json_typeof(const json_t *json) { return json ? (int)json_typeof(json) : -1; }
