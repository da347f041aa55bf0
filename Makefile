# Curlew — build, test and demo entry points. `make demo` and `make test` are the quick start.

SWIFT ?= swift
APT_PACKAGES = libcurl4-openssl-dev zlib1g-dev ca-certificates
# Heavy tests (thousands of sockets) are skipped under the thread sanitizer, which is ~10x slower.
# Tests/tsan-suppressions.txt names the one report that comes from outside Curlew (SwiftNIO's future
# bridging in the test server). Reports go to files that Tests/tsan-digest.sh prints after the run, each
# with a digest at the very end (a CI log cut to its last lines still names the race).
# The sanitizer slows every thread several times: at most 4 tests at once keeps the task pool from
# starving the timing-bound tests (a 0.5 s sleep took 15 s with every test running at once).
TSAN_REPORTS = $(CURDIR)/.build-tsan/sanitizer-reports
TSAN_ENV = CURLEW_SKIP_HEAVY=1 SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=4 \
	TSAN_OPTIONS=suppressions=$(CURDIR)/Tests/tsan-suppressions.txt:log_path=$(TSAN_REPORTS)/report
# AddressSanitizer: any memory error fails the run, and so does any leak LeakSanitizer finds at exit
# (Tests/lsan-suppressions.txt: only code outside Curlew, each with its reason; RELIABILITY.md has the
# triage). Swift on Linux has no -sanitize=undefined; its own run-time checks (overflow, bounds,
# exclusivity) are on in this debug build. `make test-asan ASAN_LEAKS=0` leaves leaks out. The quarantine
# of freed memory is 32 MiB instead of 256: kept resident, the default would break the suite's bounds on
# peak memory (a 1 GiB upload grew the peak by 370 MB).
ASAN_LEAKS ?= 1
ASAN_ENV = SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=4 \
	ASAN_OPTIONS=detect_leaks=$(ASAN_LEAKS):halt_on_error=1:detect_stack_use_after_return=0:quarantine_size_mb=32 \
	LSAN_OPTIONS=suppressions=$(CURDIR)/Tests/lsan-suppressions.txt:print_suppressions=0

.PHONY: all deps test-deps build test test-tsan test-asan fuzz fuzz-build fuzz-smoke soak test-libcurl docs api-breakage demo examples bench bench-smoke bench-deps bench-smoke-deps apt-packages clean openapi-generate

all: build

# Installs the system headers the C layer needs, only when they are missing.
deps:
	@if [ ! -f /usr/include/x86_64-linux-gnu/curl/curl.h ] && [ ! -f /usr/include/curl/curl.h ] || [ ! -f /usr/include/zlib.h ]; then \
		echo "Installing $(APT_PACKAGES)"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q && \
		$$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q $(APT_PACKAGES); \
	fi

# What the tests' real servers need: nghttpd (HTTP/2), and Python's h2 and cryptography (HTTP/2 faults,
# certificates made at test time), installed only when missing.
TEST_APT = nghttp2-server openssl
test-deps: deps
	@$(MAKE) --no-print-directory apt-packages PACKAGES="$(TEST_APT)"
	@python3 -c 'import h2, cryptography' 2>/dev/null || python3 -m pip install -q h2 cryptography
	@python3 -c 'import python_multipart' 2>/dev/null || python3 -m pip install -q python-multipart

build: deps
	$(SWIFT) build

SNIPPETS = $(basename $(notdir $(wildcard Snippets/*.swift)))

# `swift build` also builds the Snippets; each is then run, so the docs' examples cannot rot.
test: test-deps
	$(SWIFT) build
	$(SWIFT) test
	@for snippet in $(SNIPPETS); do \
		echo "Running snippet $$snippet"; \
		.build/debug/$$snippet > /dev/null || { echo "snippet $$snippet failed"; exit 1; }; \
	done

test-tsan: test-deps
	@rm -rf $(TSAN_REPORTS) && mkdir -p $(TSAN_REPORTS)
	$(TSAN_ENV) $(SWIFT) test --sanitize=thread --scratch-path .build-tsan; \
		status=$$?; Tests/tsan-digest.sh $(TSAN_REPORTS); exit $$status

test-asan: test-deps
	$(ASAN_ENV) $(SWIFT) test --sanitize=address --scratch-path .build-asan

# Fuzzing (issue 33): Fuzz/ is a package of its own, built with libFuzzer and AddressSanitizer, testing
# enabled so its targets reach the engine's parsers. `make fuzz` runs each target for FUZZ_SECONDS from
# its seed corpus (Fuzz/Corpus/<target>, kept) into a working corpus under .build-fuzz (not kept); a
# crash or a broken oracle stops the run with the input that did it. `make fuzz-smoke` (CI): 8 s each,
# under a minute.
FUZZ_TARGETS = FuzzResponseHead FuzzEventStream FuzzFilename FuzzContentDecoder FuzzJSON FuzzMultipart FuzzURL
FUZZ_SECONDS ?= 300
FUZZ_BUILD = -c release --package-path Fuzz --scratch-path $(CURDIR)/.build-fuzz \
	-Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library -Xswiftc -enable-testing

# CI's smoke run leaves FuzzMultipart out: its oracle, multipart-kit, brings SwiftNIO into the fuzz build
# (minutes on CI's two cores); `make fuzz` runs it. Built product by product, so nothing else is built.
FUZZ_SMOKE_TARGETS = $(filter-out FuzzMultipart,$(FUZZ_TARGETS))

fuzz-build: deps
	@for target in $(FUZZ_TARGETS); do $(SWIFT) build $(FUZZ_BUILD) --product $$target || exit 1; done

fuzz: fuzz-build
	@for target in $(FUZZ_TARGETS); do \
		mkdir -p .build-fuzz/corpus/$$target .build-fuzz/artifacts; \
		echo "=== $$target, $(FUZZ_SECONDS) s"; \
		SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=0 .build-fuzz/release/$$target -max_total_time=$(FUZZ_SECONDS) -max_len=4096 \
			-print_final_stats=1 -artifact_prefix=.build-fuzz/artifacts/$$target- \
			.build-fuzz/corpus/$$target Fuzz/Corpus/$$target || exit 1; \
	done

fuzz-smoke:
	@$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=8 FUZZ_TARGETS="$(FUZZ_SMOKE_TARGETS)"

# The soak (issue 33; by hand, never in CI): a million mixed requests through one session against nginx and
# a hostile server on loopback, the process's descriptors, threads and memory and the session's counters
# sampled between rounds; prints the figures and draws soak.png. SOAK_REQUESTS and SOAK_SECONDS bound it.
soak: bench-smoke-deps
	python3 -c 'import matplotlib' 2>/dev/null || python3 -m pip install -q matplotlib
	cd Benchmarks && $(SWIFT) build -c release --product soak
	python3 Benchmarks/soak.py

# The suite on another libcurl, without rebuilding: `make test-libcurl LIBCURL=<folder with libcurl.so.4>`
# (a colon-separated list when the library needs folders of its own too). The debug build (headers from
# the system's libcurl4-openssl-dev) runs with the dynamic linker finding that library first. The floor
# probe runs first: a library below Curlew's floor must be refused by a session and by a provider's default
# session (then the suite is not run); a supported one runs the whole suite.
test-libcurl: test-deps
	@test -n "$(LIBCURL)" || { echo "usage: make test-libcurl LIBCURL=<folder holding libcurl.so.4>"; exit 2; }
	$(SWIFT) build --build-tests
	@status=0; LD_LIBRARY_PATH="$(LIBCURL)" .build/debug/LibcurlFloorProbe || status=$$?; \
	case $$status in \
		0) LD_LIBRARY_PATH="$(LIBCURL)" .build/debug/CurlewPackageTests.xctest --testing-library swift-testing ;; \
		3) echo "libcurl in $(LIBCURL) is below Curlew's floor and was refused both ways; the suite is not run" ;; \
		*) echo "the floor probe failed (status $$status)"; exit 1 ;; \
	esac

# The DocC documentation of Curlew, CurlewEngine, CurlewTesting and CurlewOpenAPI, with every symbol link and
# @Snippet path checked (warnings are errors). CURLEW_CI=1 adds the DocC plugin to the manifest.
DOCC_TARGETS = --target Curlew --target CurlewEngine --target CurlewTesting --target CurlewOpenAPI
docs: deps
	CURLEW_CI=1 $(SWIFT) package --disable-sandbox generate-documentation $(DOCC_TARGETS) \
		--enable-experimental-combined-documentation --warnings-as-errors

# The public API against the last release (.ci/api-baseline, whose API digest is committed in .ci/api-digest):
# fails on a break not listed in .ci/api-breaks-allowed.txt. Seconds after `make test` under CI's settings.
api-breakage: deps
	CURLEW_CI=1 .ci/api-breakage

demo: deps
	$(SWIFT) run curlew-demo

# The examples (Examples/, a package of their own that the library's users never build): the Hummingbird 2
# service of the "Using Curlew in a service" article, and the compile check that names every public Curlew
# type unqualified beside Hummingbird, NIOHTTP1, NIOSSL, async-http-client and the OpenAPI runtime (with
# warnings as errors), then Scripts/check-names.py, which fails if that file misses a public type. In CI: a
# cold build took 3.6 minutes on two idle cores (Hummingbird, async-http-client and their dependencies).
examples: deps
	cd Examples && $(SWIFT) build -Xswiftc -warnings-as-errors
	python3 Examples/Scripts/check-names.py

# The benchmark suite (Benchmarks/): nginx on loopback, every client interleaved; writes BENCHMARKS.md.
BENCH_APT = nginx-light gcc valgrind binutils
BENCH_SMOKE_APT = nginx-light gcc

bench-deps: test-deps
	@$(MAKE) --no-print-directory apt-packages PACKAGES="$(BENCH_APT)"

bench-smoke-deps: test-deps
	@$(MAKE) --no-print-directory apt-packages PACKAGES="$(BENCH_SMOKE_APT)"

# Installs the listed Debian packages that are missing.
apt-packages:
	@missing=""; for p in $(PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q && \
		$$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing; \
	fi

# `make bench BASELINE=<git ref>` also runs the provider and the engine built from that ref (with the current
# harness) on the buffered and streamed exchanges, interleaved with the current tree's, for before/after
# figures in the same report.
bench: bench-deps
	python3 -c 'import matplotlib' 2>/dev/null || python3 -m pip install -q matplotlib
	ulimit -n 65536 2>/dev/null || true; python3 Benchmarks/run.py $(if $(BASELINE),--baseline $(BASELINE))

# Seconds, tiny counts, Curlew and the C client only: keeps the suite from rotting (run in CI).
bench-smoke: bench-smoke-deps
	ulimit -n 65536 2>/dev/null || true; python3 Benchmarks/run.py --smoke

clean:
	rm -rf .build .build-tsan .build-asan .build-fuzz Benchmarks/.build Benchmarks/out

# Regenerates the committed client in Tests/OpenAPIFixture/Generated from openapi.yaml (every file there
# is the generator's: stale ones are removed first). Not run by CI: it builds swift-openapi-generator,
# pinned so that the output changes only with the document, in a package of its own (a minute or more).
OPENAPI_GENERATOR_DIR ?= $(CURDIR)/.build-openapi-generator
OPENAPI_FIXTURE = $(CURDIR)/Tests/OpenAPIFixture

openapi-generate:
	mkdir -p "$(OPENAPI_GENERATOR_DIR)"
	printf '%s\n' '// swift-tools-version:6.2' 'import PackageDescription' '' \
		'let package = Package(' '    name: "OpenAPIGeneratorTool",' '    dependencies: [' \
		'        .package(url: "https://github.com/apple/swift-openapi-generator", exact: "1.14.3"),' \
		'    ]' ')' > "$(OPENAPI_GENERATOR_DIR)/Package.swift"
	$(SWIFT) build --package-path "$(OPENAPI_GENERATOR_DIR)" --product swift-openapi-generator
	rm -f "$(OPENAPI_FIXTURE)"/Generated/*.swift
	$(SWIFT) run --skip-build --package-path "$(OPENAPI_GENERATOR_DIR)" swift-openapi-generator generate \
		"$(OPENAPI_FIXTURE)/openapi.yaml" --config "$(OPENAPI_FIXTURE)/openapi-generator-config.yaml" \
		--output-directory "$(OPENAPI_FIXTURE)/Generated"
