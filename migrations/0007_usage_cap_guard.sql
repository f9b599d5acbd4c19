-- The monthly cap as a guard on the usage row (src/ingestion/Quota.ts): a delivery stores its hits
-- in one statement that adds them to the usage and records the cap it was checked against; if that
-- would take the usage above the cap, the statement fails whole (nothing stored) and the delivery
-- is stored again under the row lock, up to the room left. NULL: no cap recorded (demo data).
alter table monthly_usage add column cap bigint;
alter table monthly_usage add constraint monthly_usage_within_cap check (cap is null or events <= cap);
