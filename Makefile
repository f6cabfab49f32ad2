# The two set-up commands of the README: `make run` and `make test`. Each installs what it
# needs (scripts/deps.sh), builds, and then serves / tests.
BUILD ?= build
JOBS ?= 2
CMAKE_FLAGS ?=

.PHONY: deps configure build test run bench format clean

deps:
	@scripts/deps.sh

configure: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) >/dev/null

build: configure
	@cmake --build $(BUILD) -j$(JOBS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS)

# Until the server lands (issue 4) the main job is one generation on the default model.
run: build
	$(BUILD)/anchorage run --preset small --seed 1 --prompt-tokens 2048 --max-tokens 64

bench: build
	scripts/bench.sh $(BUILD)

format:
	@git ls-files '*.cc' '*.h' | xargs clang-format -i

clean:
	rm -rf $(BUILD)
