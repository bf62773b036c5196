// Gives the memory that the C library holds free back to the operating system.
#include <Rcpp.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

// glibc keeps freed memory in its arenas for reuse; after a large upload the web process of
// serve() would hold the chunks httpuv queued (up to the size of the upload) until the next
// one. malloc_trim(0) returns the free pages of every arena. Elsewhere a no-op (FALSE).
// [[Rcpp::export]]
bool fsgpu_release_memory() {
#if defined(__GLIBC__)
  return malloc_trim(0) != 0;
#else
  return false;
#endif
}
