# The README's two commands: `make run` and `make test`. Both install missing Debian packages,
# configure and build (CMake, build/), then run the default scenario or the whole test suite.
BUILD_DIR ?= build
BUILD_TYPE ?= RelWithDebInfo
JOBS ?= 2
SCENARIO ?= platform/scenarios/default.json
ARGS ?=

.PHONY: all deps configure build run test bench clean

all: build

deps:
	@tools/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) > $(BUILD_DIR).configure.log 2>&1 || (cat $(BUILD_DIR).configure.log; exit 1)

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

# The run needs rnic-sim only; the test suites are built by `make test`.
run: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS) --target rnic-sim
	$(BUILD_DIR)/bin/rnic-sim --scenario $(SCENARIO) $(ARGS)

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

bench: build
	$(BUILD_DIR)/bin/rnic-bench --sim $(BUILD_DIR)/bin/rnic-sim

clean:
	rm -rf $(BUILD_DIR) $(BUILD_DIR).configure.log
