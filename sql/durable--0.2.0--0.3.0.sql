-- durable 0.2.0 -> 0.3.0: safety (no input, user code or fault brings the
-- server down or wedges the engine).

\echo Use "ALTER EXTENSION durable UPDATE TO '0.3.0'" to load this file. \quit
