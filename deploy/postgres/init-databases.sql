-- One database per app (database-per-service). Run once by the postgres image on first
-- start (/docker-entrypoint-initdb.d), as the POSTGRES_USER, who owns them.
CREATE DATABASE recur_gateway;
CREATE DATABASE recur_catalog;
CREATE DATABASE recur_subscription;
CREATE DATABASE recur_invoicing;
CREATE DATABASE recur_payments;
CREATE DATABASE recur_usage_metering;
CREATE DATABASE recur_webhook_dispatch;
