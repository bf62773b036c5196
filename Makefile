# Developer Makefile for fsgpu (GNU make). On a fresh Debian machine:
#
#   make demo    install what is missing, build, run inst/scripts/demo.R
#   make test    the same build, a CPU-only build, the C++ and R test suites
#   make serve   the same build, then the web service (?fsgpu::serve) on 127.0.0.1:8080
#
# Other targets: deps, install, install-cpu, cpptest, check, document, rdev, fuzz, clean.
# Nothing is installed system-wide except Debian packages (deps): the package goes
# to build/lib (build/lib-cpu for the CPU-only build). SKIP_DEPS=1 skips deps.

SHELL = /bin/sh
R = R
RSCRIPT = Rscript
JOBS := $(shell nproc 2>/dev/null || echo 2)
LIB = $(CURDIR)/build/lib
LIB_CPU = $(CURDIR)/build/lib-cpu
PKG_VERSION := $(shell sed -n 's/^Version: *//p' DESCRIPTION)
DEVICE_R_PACK = ../shared/tools/device-r/pack

DEB_PACKAGES = r-base-dev r-cran-rcpp r-cran-rcpparmadillo r-cran-matrix \
  r-cran-testthat r-cran-knitr r-cran-rmarkdown r-cran-cli r-cran-igraph \
  r-cran-roxygen2 r-bioc-summarizedexperiment r-bioc-all r-bioc-biocneighbors \
  r-bioc-bluster r-bioc-biocparallel r-bioc-s4vectors r-bioc-singlecellexperiment r-bioc-delayedarray \
  r-bioc-hdf5array r-bioc-biocstyle r-bioc-scran r-cran-batchtools r-bioc-singler r-cran-fnn pandoc cmake \
  r-cran-httpuv r-cran-jsonlite r-cran-rsqlite r-cran-dbi r-cran-sodium r-cran-processx r-cran-callr \
  r-cran-curl r-cran-rpostgresql postgresql curl chromium chromium-driver python3-selenium \
  libsodium-dev r-cran-robustrankaggreg r-cran-e1071 r-cran-ranger r-cran-bit64

# The R builds share src/ (objects are built in place): one target at a time.
# Each R CMD INSTALL compiles with $(JOBS) jobs of its own.
.NOTPARALLEL:
.PHONY: all deps install install-cpu demo serve test cpptest check document rdev fuzz clean

all: install

deps:
	@if [ -n "$(SKIP_DEPS)" ]; then exit 0; fi; \
	if ! command -v dpkg-query >/dev/null 2>&1; then \
	  echo "fsgpu: no dpkg here; install R (>= 4.2) and the packages in DESCRIPTION yourself"; exit 0; \
	fi; \
	missing=; \
	for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q ' installed$$' || missing="$$missing $$p"; \
	done; \
	[ -z "$$missing" ] && exit 0; \
	echo "fsgpu: installing Debian packages:$$missing"; \
	if [ "$$(id -u)" = 0 ]; then sudo=; \
	elif command -v sudo >/dev/null 2>&1; then sudo=sudo; \
	else echo "fsgpu: need root (or sudo) to install:$$missing" >&2; exit 1; fi; \
	$$sudo env DEBIAN_FRONTEND=noninteractive apt-get update && \
	$$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $$missing

# CUDA build when configure finds a working nvcc (FSGPU_CUDA=yes|no to force)
install: deps
	@mkdir -p $(LIB)
	MAKEFLAGS=-j$(JOBS) R_LIBS=$(LIB) $(R) CMD INSTALL --preclean --no-multiarch -l $(LIB) .

install-cpu: deps
	@mkdir -p $(LIB_CPU)
	FSGPU_CUDA=no MAKEFLAGS=-j$(JOBS) R_LIBS=$(LIB_CPU) $(R) CMD INSTALL --preclean --no-multiarch -l $(LIB_CPU) .

demo: install
	R_LIBS=$(LIB) $(RSCRIPT) inst/scripts/demo.R

# the web service on the embedded default (SQLite in ./fsgpu-store, 127.0.0.1:8080); Ctrl-C stops
STORE = fsgpu-store
PORT = 8080
serve: install
	R_LIBS=$(LIB) $(RSCRIPT) exec/fsgpu serve --store $(STORE) --port $(PORT)

# C++ core tests (tests/cpp, CMake + CTest); writes "passed failed" to build/cpp/counts
cpptest:
	@mkdir -p build/cpp; echo "0 0" > build/cpp/counts; \
	if [ ! -f tests/cpp/CMakeLists.txt ]; then echo "fsgpu: no tests/cpp/CMakeLists.txt, no C++ tests"; exit 0; fi; \
	if ! { cmake -S tests/cpp -B build/cpp -DCMAKE_BUILD_TYPE=Release && \
	       MAKEFLAGS= MFLAGS= cmake --build build/cpp -j $(JOBS); }; then \
	  echo "0 1" > build/cpp/counts; echo "fsgpu: the C++ tests did not build" >&2; exit 1; \
	fi; \
	rc=0; ctest --test-dir build/cpp --output-on-failure -j $(JOBS) > build/cpp/ctest.log 2>&1 || rc=$$?; \
	cat build/cpp/ctest.log; \
	counts=$$(sed -n 's/.*tests passed, \([0-9][0-9]*\) tests failed out of \([0-9][0-9]*\).*/\1 \2/p' build/cpp/ctest.log | tail -n 1); \
	if [ -n "$$counts" ]; then set -- $$counts; echo "$$(($$2 - $$1)) $$1" > build/cpp/counts; \
	elif [ $$rc -ne 0 ]; then echo "0 1" > build/cpp/counts; fi; \
	exit $$rc

# R test suite against the installed build/lib; the last line is "N passed, N failed, N skipped"
define FSGPU_TEST_R
suppressPackageStartupMessages(library(testthat))
cpp <- if (file.exists("build/cpp/counts")) scan("build/cpp/counts", quiet = TRUE) else c(0, 0)
passed <- 0L; failed <- 0L; skipped <- 0L
files <- list.files("tests/testthat", pattern = "^test.*[.][rR]$$")
if (length(files) == 0L) {
  message("fsgpu: no test files in tests/testthat")
} else {
  res <- tryCatch(
    test_dir("tests/testthat", package = "fsgpu", load_package = "installed",
             reporter = ProgressReporter$$new(show_praise = FALSE, max_failures = Inf,
               update_interval = if (cli::is_dynamic_tty()) 0.1 else Inf),
             stop_on_failure = FALSE, stop_on_warning = FALSE),
    error = function(e) {
      message("fsgpu: the R test run stopped: ", conditionMessage(e))
      NULL
    })
  if (is.null(res)) {
    failed <- 1L
  } else {
    df <- as.data.frame(res)
    passed <- sum(df$$passed)
    failed <- sum(df$$failed) + sum(df$$error)
    skipped <- sum(df$$skipped)
  }
}
cat(sprintf("R tests: %d passed, %d failed, %d skipped (expectations)\n", passed, failed, skipped))
cat(sprintf("C++ tests: %d passed, %d failed (ctest)\n", cpp[1], cpp[2]))
passed <- passed + cpp[1]; failed <- failed + cpp[2]
cat(sprintf("%d passed, %d failed, %d skipped\n", passed, failed, skipped))
quit(save = "no", status = if (failed > 0) 1L else 0L)
endef
export FSGPU_TEST_R

test: deps install install-cpu
	@rc=0; $(MAKE) --no-print-directory cpptest || rc=1; \
	NOT_CRAN=true R_LIBS=$(LIB) $(RSCRIPT) -e "$$FSGPU_TEST_R" || rc=1; \
	exit $$rc

check: deps
	@rm -rf build/check; mkdir -p build/check
	cd build/check && MAKEFLAGS=-j$(JOBS) $(R) CMD build ../.. && \
	  _R_CHECK_FORCE_SUGGESTS_=false MAKEFLAGS=-j$(JOBS) \
	  $(R) CMD check --no-manual fsgpu_$(PKG_VERSION).tar.gz

# regenerate src/RcppExports.cpp, R/RcppExports.R, NAMESPACE and man/. roxygen's "source" loader
# does not make its environment the top level, where methods::setClass() looks for the package
# of a class that extends another package's (FsgpuParam extends BiocNeighborParam): say it here.
document:
	$(RSCRIPT) -e 'options(topLevelEnvironment = list2env(list(.packageName = "roxygen_devtest")))' \
	  -e 'Rcpp::compileAttributes(); roxygen2::roxygenise(load_code = "source")'

# build for the GPU host that has no R (see ../shared/tools/device-r/README.md)
rdev:
	@[ -f .rdev/activate ] || $(DEVICE_R_PACK) BiocNeighbors BiocParallel
	@mkdir -p .rdev/lib
	FSGPU_CUDA_ARCHS=$${FSGPU_CUDA_ARCHS:-90} MAKEFLAGS=-j$(JOBS) \
	  $(R) CMD INSTALL --preclean --no-multiarch --no-test-load -l .rdev/lib .

# libFuzzer runs of the LibSVM and ARFF parsers (clang); FUZZ_TIME seconds each (tests/fuzz/README.md)
FUZZ_TIME = 300
fuzz:
	$(MAKE) -C tests/fuzz run FUZZ_TIME=$(FUZZ_TIME)

clean:
	sh ./cleanup
	rm -rf build fsgpu.Rcheck fsgpu_*.tar.gz
