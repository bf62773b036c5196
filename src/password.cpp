// Glue for the service's password hashes (R/serve_store.R): libsodium's Argon2id in the
// library's string format, crypto_pwhash_str(), which holds the algorithm, the cost and a
// random salt. Called directly because the sodium R package's argon2() cannot run on
// libsodium >= 1.0.15: it asks Argon2i for an operation limit of 2, below Argon2i's minimum
// of 3. Without libsodium (configure did not find it) only password_argon2_available()
// works, and says FALSE; the service then uses the sodium package's scrypt.
#include <Rcpp.h>

#include <cstring>
#include <string>

#ifdef FSGPU_WITH_SODIUM
#include <sodium.h>
#endif

namespace {

// The password's bytes, read in place from R's string (UTF-8, see R/serve_store.R): no copy
// is made, so none is left behind in memory this code frees.
struct PasswordBytes {
  const char* data;
  unsigned long long size;
};

PasswordBytes password_bytes(SEXP password) {
  if (TYPEOF(password) != STRSXP || XLENGTH(password) != 1 || STRING_ELT(password, 0) == NA_STRING)
    Rcpp::stop("the password must be one string (not NA)");
  SEXP s = STRING_ELT(password, 0);
  return {CHAR(s), static_cast<unsigned long long>(LENGTH(s))};
}

#ifdef FSGPU_WITH_SODIUM

void sodium_ready() {
  if (sodium_init() < 0) Rcpp::stop("libsodium could not be initialised");
}

// The cost of a new hash, checked against libsodium's limits for Argon2id; the messages name
// the service's settings, the only callers.
struct Cost {
  unsigned long long ops;
  size_t memory;
};

Cost argon2id_cost(double ops, double memory) {
  const double ops_min = crypto_pwhash_OPSLIMIT_MIN, ops_max = crypto_pwhash_OPSLIMIT_MAX;
  const double mem_min = crypto_pwhash_MEMLIMIT_MIN, mem_max = static_cast<double>(crypto_pwhash_MEMLIMIT_MAX);
  if (!(ops >= ops_min && ops <= ops_max) || ops != static_cast<double>(static_cast<unsigned long long>(ops)))
    Rcpp::stop("password_ops (Argon2id's passes over the memory) must be a whole number from %.0f to %.0f, not %g",
               ops_min, ops_max, ops);
  if (!(memory >= mem_min && memory <= mem_max) || memory != static_cast<double>(static_cast<size_t>(memory)))
    Rcpp::stop("password_memory (Argon2id's memory, in bytes) must be a whole number from %.0f to %.0f, not %g",
               mem_min, mem_max, memory);
  return {static_cast<unsigned long long>(ops), static_cast<size_t>(memory)};
}

// A stored hash as libsodium reads it: a NUL-terminated string in a buffer of
// crypto_pwhash_STRBYTES. Returns false for anything that cannot be one (too long, NA).
bool hash_buffer(SEXP hash, char (&buffer)[crypto_pwhash_STRBYTES]) {
  if (TYPEOF(hash) != STRSXP || XLENGTH(hash) != 1) Rcpp::stop("the hash must be one string");
  SEXP s = STRING_ELT(hash, 0);
  if (s == NA_STRING || static_cast<size_t>(LENGTH(s)) >= sizeof buffer) return false;
  std::memset(buffer, 0, sizeof buffer);
  std::memcpy(buffer, CHAR(s), static_cast<size_t>(LENGTH(s)));
  return true;
}

#endif

}  // namespace

// Whether this build has libsodium's Argon2id.
// [[Rcpp::export]]
bool password_argon2_available() {
#ifdef FSGPU_WITH_SODIUM
  return true;
#else
  return false;
#endif
}

// The Argon2id string of `password` ("$argon2id$v=19$m=...,t=...,p=1$salt$hash"), with
// `ops` passes over `memory` bytes and a fresh random salt.
// [[Rcpp::export]]
std::string password_argon2id_hash(SEXP password, double ops, double memory) {
#ifdef FSGPU_WITH_SODIUM
  const PasswordBytes p = password_bytes(password);
  const Cost cost = argon2id_cost(ops, memory);
  sodium_ready();
  char out[crypto_pwhash_STRBYTES];
  if (crypto_pwhash_str(out, p.data, p.size, cost.ops, cost.memory) != 0)
    Rcpp::stop("Argon2id could not hash the password with %.0f bytes of memory (out of memory?)", memory);
  return std::string(out);
#else
  (void)password_bytes(password);
  (void)ops;
  (void)memory;
  Rcpp::stop("fsgpu was built without libsodium, so it has no Argon2id");
#endif
}

// Whether `password` matches the Argon2 string `hash` (Argon2id, or Argon2i written by other
// software); FALSE for a hash libsodium cannot read.
// [[Rcpp::export]]
bool password_argon2_verify(SEXP hash, SEXP password) {
#ifdef FSGPU_WITH_SODIUM
  const PasswordBytes p = password_bytes(password);
  char buffer[crypto_pwhash_STRBYTES];
  if (!hash_buffer(hash, buffer)) return false;
  sodium_ready();
  return crypto_pwhash_str_verify(buffer, p.data, p.size) == 0;
#else
  (void)hash;
  (void)password_bytes(password);
  Rcpp::stop("fsgpu was built without libsodium, so it cannot check Argon2 hashes");
#endif
}

// Whether the Argon2 string `hash` should be replaced by a new hash: it is not Argon2id with
// `ops` passes over `memory` bytes (libsodium's crypto_pwhash_str_needs_rehash(), which also
// says so for a string it cannot read).
// [[Rcpp::export]]
bool password_argon2id_needs_rehash(SEXP hash, double ops, double memory) {
#ifdef FSGPU_WITH_SODIUM
  const Cost cost = argon2id_cost(ops, memory);
  char buffer[crypto_pwhash_STRBYTES];
  if (!hash_buffer(hash, buffer)) return true;
  if (std::strncmp(buffer, crypto_pwhash_argon2id_STRPREFIX, std::strlen(crypto_pwhash_argon2id_STRPREFIX)) != 0)
    return true;
  sodium_ready();
  return crypto_pwhash_str_needs_rehash(buffer, cost.ops, cost.memory) != 0;
#else
  (void)hash;
  (void)ops;
  (void)memory;
  Rcpp::stop("fsgpu was built without libsodium, so it has no Argon2id");
#endif
}
