# The two set-up commands of the README: `make run` and `make test`. Each installs what it
# needs (scripts/deps.sh), builds, and then serves / tests.
BUILD ?= build
JOBS ?= 2
CMAKE_FLAGS ?=

.PHONY: deps configure build test run bench bench-replay bench-disk format clean

deps:
	@scripts/deps.sh

configure: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) >/dev/null

build: configure
	@cmake --build $(BUILD) -j$(JOBS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS)

# The main job: the OpenAI-compatible server (docs/http-api.md) on the default model, the
# `small` preset with random weights, on 127.0.0.1:8080. SERVE_FLAGS adds flags
# (make run SERVE_FLAGS="--preset tiny --port 9000"); ANCHORAGE_* variables work too.
SERVE_FLAGS ?=
run: build
	$(BUILD)/anchorage serve $(SERVE_FLAGS)

bench: build
	scripts/bench.sh $(BUILD)

# The replay benchmark (docs/performance.md "Replay"): every scenario under every cache
# configuration on `small`; per-request lines, the summary and the plot land in $(BUILD)/replay/.
REPLAY_FLAGS ?=
bench-replay: configure
	@cmake --build $(BUILD) -j$(JOBS) --target anchorage
	@mkdir -p $(BUILD)/replay
	$(BUILD)/anchorage bench replay --preset small --out $(BUILD)/replay $(REPLAY_FLAGS) \
	  | tee $(BUILD)/replay/summary.json

# The disk tier's figures (docs/performance.md "Disk tier"): raw O_DIRECT rates, the tier's
# restore and write rates, TTFT of an 8k and a 32k head from the disk against cold, on `small`.
# DISK_FLAGS adds flags (--dir DIR: another file system; --quick: tiny, 2k head).
DISK_FLAGS ?=
bench-disk: configure
	@cmake --build $(BUILD) -j$(JOBS) --target disk_bench
	$(BUILD)/bench/disk_bench $(DISK_FLAGS) | tee $(BUILD)/disk_bench.json

format:
	@git ls-files '*.cc' '*.h' | xargs clang-format -i

clean:
	rm -rf $(BUILD)
