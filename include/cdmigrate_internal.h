/*
** cdmigrate_internal.h — test hooks of libcdmigrate. NOT part of the C API: no stability promise,
** not installed by `make install`, may change or go in any release. The library exports these
** functions (under the same symbol version as the API) so that the repository's C tests
** (Tests/c) and the Python binding's layout check can reach them; hosts must not use them.
*/
#ifndef CDMIGRATE_INTERNAL_H
#define CDMIGRATE_INTERNAL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 0 when the library's cdm_policy and cdm_progress have these sizes (the header's), 1 otherwise. */
int cdm_internal_abi_check(size_t policy_size, size_t progress_size);
/* The library's size of a struct of cdmigrate.h ("cdm_field", "cdm_policy", …): its Swift
** mirror's stride, which must equal C's sizeof (scripts/check-abi.py checks every struct); 0 for an
** unknown name. */
size_t cdm_internal_struct_size(const char *name);
/* How many short-lived handles are live on the calling thread (lets the tests check that memory
** stays flat). */
size_t cdm_internal_handle_count(void);

#ifdef __cplusplus
}
#endif
#endif /* CDMIGRATE_INTERNAL_H */
