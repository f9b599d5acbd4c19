-- The fair webhook sender (docs/webhooks.md, "Delivery") counts each account's deliveries in
-- flight (leased) at every claim: the leased rows are few (a lease is cleared when its attempt is
-- recorded), so a partial index on them keeps that count small whatever the backlog.
create index webhook_deliveries_leased on webhook_deliveries (account_id, claimed_until) where claimed_until is not null;
