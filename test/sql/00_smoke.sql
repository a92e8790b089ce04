-- Plumbing smoke test: the extension installs and its clock answers.
CREATE EXTENSION durable;
SELECT durable.now() IS NOT NULL AS now_works;
