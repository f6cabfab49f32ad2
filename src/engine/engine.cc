// The engine: see engine.h (being written).
