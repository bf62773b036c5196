# The service's password hashes (R/serve_store.R, src/password.cpp): libsodium's Argon2id,
# the scrypt hashes of older stores (and of builds without libsodium) rehashed at login.

skip_without_argon2 <- function() {
  skip_without_service()
  skip_if_not(fsgpu:::password_argon2_available(), "fsgpu was built without libsodium (no Argon2id)")
}

new_password_store <- function() fsgpu:::store_open(tempfile("store-"))

stored_hash <- function(s, name) fsgpu:::store_query(s, "SELECT hash FROM users WHERE name = ?", name)$hash

default_cost <- list(ops = 2, memory = 67108864)

test_that("Argon2id hashes: libsodium's string at the settings' cost, salted, verified right and wrong", {
  skip_without_argon2()
  h <- fsgpu:::password_hash("correct horse battery", default_cost)
  # algorithm, version, memory in KiB, passes, one lane; then a 16-byte salt and a 32-byte hash (base64)
  expect_match(h, "^\\$argon2id\\$v=19\\$m=65536,t=2,p=1\\$[A-Za-z0-9+/]{22}\\$[A-Za-z0-9+/]{43}$")
  expect_false(identical(h, fsgpu:::password_hash("correct horse battery", default_cost)))  # a new salt each time
  expect_true(fsgpu:::password_verify(h, "correct horse battery"))
  expect_false(fsgpu:::password_verify(h, "correct horse batterY"))
  expect_false(fsgpu:::password_verify(h, "correct horse battery "))
  expect_false(fsgpu:::password_verify(h, ""))
  expect_false(fsgpu:::password_needs_rehash(h, default_cost))
  expect_true(fsgpu:::password_needs_rehash(h, list(ops = 3, memory = 67108864)))
  expect_true(fsgpu:::password_needs_rehash(h, list(ops = 2, memory = 2^20)))
  expect_match(fsgpu:::password_hash("x", list(ops = 1, memory = 2^20)), "^\\$argon2id\\$v=19\\$m=1024,t=1,p=1\\$")
  # a string that is no hash verifies nothing
  expect_false(fsgpu:::password_verify("$argon2id$v=19$m=65536,t=2,p=1$bm9uZQ$bm9uZQ", "x"))
  expect_false(fsgpu:::password_verify(strrep("$argon2id$", 20), "x"))
  expect_false(fsgpu:::password_verify("not a hash", "x"))
})

test_that("empty, very long and non-ASCII passwords hash and verify; the accounts keep their length limits", {
  skip_without_argon2()
  cheap <- list(ops = 1, memory = 2^20)
  empty <- fsgpu:::password_hash("", cheap)
  expect_true(fsgpu:::password_verify(empty, ""))
  expect_false(fsgpu:::password_verify(empty, " "))
  long <- strrep("0123456789", 1e5)  # a million bytes
  h <- fsgpu:::password_hash(long, cheap)
  expect_true(fsgpu:::password_verify(h, long))
  expect_false(fsgpu:::password_verify(h, paste0(substr(long, 1, 1e6 - 1), "x")))
  # the bytes hashed are UTF-8, whatever the string's encoding in R
  utf8 <- "p\u00e4ssw\u00f6rd \u00fc"
  latin1 <- iconv(utf8, "UTF-8", "latin1")
  expect_false(identical(charToRaw(utf8), charToRaw(latin1)))
  h <- fsgpu:::password_hash(latin1, cheap)
  expect_true(fsgpu:::password_verify(h, utf8))
  expect_false(fsgpu:::password_verify(h, "passwort \u00fc"))

  s <- new_password_store()
  on.exit(fsgpu:::store_close(s))
  expect_error(fsgpu:::user_create(s, "alice", ""), "8 to 1024")
  expect_error(fsgpu:::user_create(s, "alice", strrep("x", 1025)), "8 to 1024")
  expect_error(fsgpu:::user_create(s, "alice", strrep("\u00e9", 513)), "8 to 1024")  # 1026 bytes
  fsgpu:::user_create(s, "alice", strrep("x", 1024))
  expect_true(fsgpu:::user_check(s, "alice", strrep("x", 1024)))
  # a login with a longer password is refused before any hashing
  expect_false(fsgpu:::user_check(s, "alice", strrep("x", 1e6)))
  expect_false(fsgpu:::user_check(s, "alice", ""))
})

test_that("calls with the wrong types are clear errors, or a failed login", {
  skip_without_argon2()
  expect_error(fsgpu:::password_hash(12345678, default_cost), "the password must be one string")
  expect_error(fsgpu:::password_hash(c("a", "b"), default_cost), "the password must be one string")
  expect_error(fsgpu:::password_hash(NA_character_, default_cost), "the password must be one string")
  expect_error(fsgpu:::password_verify("$7$x", NULL), "the password must be one string")
  # the C++ glue checks for itself
  expect_error(fsgpu:::password_argon2id_hash(charToRaw("secret"), 2, 67108864), "the password must be one string")
  expect_error(fsgpu:::password_argon2_verify(1, "secret"), "the hash must be one string")
  expect_error(fsgpu:::password_argon2id_hash("secret", 0, 67108864), "password_ops .* from 1 to")
  expect_error(fsgpu:::password_argon2id_hash("secret", 2.5, 67108864), "password_ops .* whole number")
  expect_error(fsgpu:::password_argon2id_hash("secret", 2, 1000), "password_memory .* from 8192 to")
  expect_error(fsgpu:::password_argon2id_hash("secret", NA_real_, 67108864), "password_ops")
  s <- new_password_store()
  on.exit(fsgpu:::store_close(s))
  expect_error(fsgpu:::user_create(s, "alice", 12345678), "8 to 1024")
  fsgpu:::user_create(s, "alice", "password1")
  expect_false(fsgpu:::user_check(s, "alice", 12345678))
  expect_false(fsgpu:::user_check(s, "alice", NA_character_))
  expect_false(fsgpu:::user_check(s, "alice", c("password1", "password1")))
})

test_that("an old scrypt hash still logs in and is rehashed to Argon2id at the first successful login", {
  skip_without_argon2()
  s <- new_password_store()
  on.exit(fsgpu:::store_close(s))
  # a user as a store written before Argon2id (or by a build without libsodium) holds them
  old <- sodium::password_store("old password")
  expect_match(old, "^\\$7\\$")
  fsgpu:::store_execute(s, "INSERT INTO users (name, hash, created) VALUES (?, ?, ?)", "carol", old, 0)
  expect_false(fsgpu:::user_check(s, "carol", "wrong password"))
  expect_identical(stored_hash(s, "carol"), old)  # a failed login changes nothing
  expect_true(fsgpu:::user_check(s, "carol", "old password"))
  new <- stored_hash(s, "carol")
  expect_match(new, "^\\$argon2id\\$v=19\\$m=65536,t=2,p=1\\$")
  expect_true(fsgpu:::password_verify(new, "old password"))
  expect_true(fsgpu:::user_check(s, "carol", "old password"))
  expect_identical(stored_hash(s, "carol"), new)  # at the settings' cost: kept
  expect_false(fsgpu:::user_check(s, "carol", "wrong password"))
})

test_that("a hash at another cost than the settings' is redone at the next login", {
  skip_without_argon2()
  s <- new_password_store()
  on.exit(fsgpu:::store_close(s))
  fsgpu:::user_create(s, "dave", "dave's password")
  first <- stored_hash(s, "dave")
  expect_match(first, "\\$m=65536,t=2,p=1\\$")
  fsgpu:::store_save_settings(s, list(password_ops = 3, password_memory = 2^25))
  expect_false(fsgpu:::user_check(s, "dave", "not dave's"))
  expect_identical(stored_hash(s, "dave"), first)
  expect_true(fsgpu:::user_check(s, "dave", "dave's password"))
  expect_match(stored_hash(s, "dave"), "^\\$argon2id\\$v=19\\$m=32768,t=3,p=1\\$")
  expect_true(fsgpu:::user_check(s, "dave", "dave's password"))
  # an Argon2i hash (written by other software) is replaced too
  expect_true(fsgpu:::password_needs_rehash("$argon2i$v=19$m=32768,t=3,p=1$c2FsdHNhbHRzYWx0c2FsdA$aGFzaA", fsgpu:::password_cost(s)))
})

test_that("serve()'s start checks the cost settings by hashing once", {
  skip_without_argon2()
  expect_true(fsgpu:::password_startup(list(password_ops = 2, password_memory = 67108864)))
  expect_error(fsgpu:::password_startup(list(password_ops = 2, password_memory = 100)), "password_memory")
  expect_error(fsgpu:::password_startup(list(password_ops = 0, password_memory = 67108864)), "password_ops")
  dir <- tempfile()
  dir.create(dir)
  writeLines(c("password_ops: 3", "password_memory: 1e8"), file.path(dir, "config.dcf"))
  settings <- fsgpu:::service_settings(dir)
  expect_identical(settings[c("password_ops", "password_memory")], list(password_ops = 3, password_memory = 1e8))
})
