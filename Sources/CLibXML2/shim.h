// libxml2 as the engine sees it. Debian's libxml2 is built with ICU, and its encoding.h then pulls
// in ICU's headers, which clash with the copy of ICU that Foundation carries (same names, other
// definitions) wherever a module imports both. The engine uses no encoding API, so ICU is left out
// of this view; only xmlCharEncodingHandler's ICU fields change, a type the engine never touches.
#include <libxml/xmlversion.h>
#undef LIBXML_ICU_ENABLED
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>
