-- Alerts: signed webhooks and the health of every ingestion channel (docs/webhooks.md).

-- An account's webhook endpoints. `secret` is "whsec_" + base64 of 32 random bytes; after a rotation
-- the previous one keeps signing (a second signature) until previous_secret_until.
create table webhook_endpoints (
  id uuid primary key,
  account_id bigint not null references accounts (id) on delete cascade,
  url text not null,
  events text[] not null,
  description text not null default '',
  enabled boolean not null default true,
  secret text not null,
  previous_secret text,
  previous_secret_until timestamptz,
  -- The first failed attempt of the current run of failures (null after a success); five days of
  -- failures disable the endpoint and say why in disabled_reason.
  failing_since timestamptz,
  disabled_reason text,
  created_at timestamptz not null
);
create index webhook_endpoints_account on webhook_endpoints (account_id, created_at);

-- Each event once per account: dedup_key names the fact (a brand's first hit of a bot, a month's
-- 80% of the cap...), so a second process computing the same fact inserts nothing.
create table webhook_events (
  id text primary key, -- the webhook-id header: the same on every attempt
  account_id bigint not null references accounts (id) on delete cascade,
  type text not null,
  dedup_key text not null,
  body text not null, -- the JSON body, byte for byte as it is signed and sent
  created_at timestamptz not null,
  unique (account_id, dedup_key)
);
create index webhook_events_account on webhook_events (account_id, created_at desc);

-- The outbox: one row per (event, endpoint), written in the same transaction as the event.
-- A sender claims due rows with FOR UPDATE SKIP LOCKED and a lease (claimed_until), so one
-- process sends each attempt and a crashed sender's rows come back when the lease ends.
create table webhook_deliveries (
  id uuid primary key,
  account_id bigint not null references accounts (id) on delete cascade,
  endpoint_id uuid not null references webhook_endpoints (id) on delete cascade,
  event_id text not null references webhook_events (id) on delete cascade,
  status text not null, -- pending, delivered, failed
  attempts integer not null default 0,
  response_status integer,
  last_error text,
  created_at timestamptz not null,
  next_attempt_at timestamptz,
  claimed_until timestamptz,
  delivered_at timestamptz
);
create index webhook_deliveries_due on webhook_deliveries (next_attempt_at) where status = 'pending';
create index webhook_deliveries_endpoint on webhook_deliveries (endpoint_id, created_at desc);

-- Every attempt of a delivery, for the web app's delivery log.
create table webhook_attempts (
  delivery_id uuid not null references webhook_deliveries (id) on delete cascade,
  attempt integer not null,
  at timestamptz not null,
  response_status integer,
  error text,
  duration_ms integer not null,
  primary key (delivery_id, attempt)
);

-- The bots a brand has had stored hits of (crawler.new_bot fires when a row is first inserted).
create table brand_bots_seen (
  brand_id integer not null references brands (id) on delete cascade,
  bot text not null,
  first_seen timestamptz not null,
  primary key (brand_id, bot)
);
-- Bots already stored before alerts existed are not new.
insert into brand_bots_seen (brand_id, bot, first_seen)
select brand_id, bot, min(day)::timestamp at time zone 'UTC' from crawler_daily group by brand_id, bot;

-- Ingestion health per brand, channel and hour (refused deliveries included).
create table ingestion_health (
  account_id bigint not null references accounts (id) on delete cascade,
  brand_id integer not null references brands (id) on delete cascade,
  channel text not null,
  hour timestamptz not null,
  format text not null,
  deliveries integer not null default 0,
  records integer not null default 0,
  accepted integer not null default 0,
  skipped integer not null default 0,
  unparseable integer not null default 0,
  signature_failures integer not null default 0,
  last_received_at timestamptz not null,
  primary key (brand_id, channel, hour)
);
create index ingestion_health_hour on ingestion_health (hour);
