/* The C tests' checks: each counts as passed or failed and names the line of a failure. */
#ifndef CDM_TEST_CHECK_H
#define CDM_TEST_CHECK_H
#include <cdmigrate.h>
#include <stdio.h>
#include <string.h>

static int passed, failed;

#define CHECK(cond) do { if (cond) passed++; else { failed++; \
    fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); } } while (0)
#define CHECK_RC(expr, code) do { int rc_ = (expr); if (rc_ == (code)) passed++; else { failed++; \
    fprintf(stderr, "FAIL %s:%d: %s gave %d (%s), expected %d\n", __FILE__, __LINE__, #expr, rc_, cdm_last_errmsg(), (int)(code)); } } while (0)
#define CHECK_STR(a, b) do { const char *a_ = (a), *b_ = (b); if (a_ && b_ && strcmp(a_, b_) == 0) passed++; else { failed++; \
    fprintf(stderr, "FAIL %s:%d: %s is \"%s\", expected \"%s\"\n", __FILE__, __LINE__, #a, a_ ? a_ : "(null)", b_ ? b_ : "(null)"); } } while (0)
#define CHECK_HAS(text, part) do { const char *t_ = (text); if (t_ && strstr(t_, part)) passed++; else { failed++; \
    fprintf(stderr, "FAIL %s:%d: \"%s\" does not mention \"%s\"\n", __FILE__, __LINE__, t_ ? t_ : "(null)", part); } } while (0)

#endif
