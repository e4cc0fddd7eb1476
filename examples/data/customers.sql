-- Demo customers for the customer_lookup example tool. The api_key column is a (fake) secret
-- that the tool's transforms keep out of displays, transcripts and model output.
CREATE TABLE customers (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    email      TEXT NOT NULL UNIQUE,
    plan       TEXT NOT NULL CHECK (plan IN ('free', 'team', 'enterprise')),
    country    TEXT NOT NULL,
    since      TEXT NOT NULL,
    api_key    TEXT NOT NULL
);

INSERT INTO customers (id, name, email, plan, country, since, api_key) VALUES
    ('C1001', 'Acme Corporation',   'ops@acme.example',         'enterprise', 'US', '2019-03-14', 'sk_live_acme_4f9a2c7e1b'),
    ('C1002', 'Globex GmbH',        'it@globex.example',        'team',       'DE', '2021-07-01', 'sk_live_globex_8d3e6b2a90'),
    ('C1003', 'Initech SARL',       'admin@initech.example',    'free',       'FR', '2023-11-20', 'sk_live_initech_17c5f0e3d4'),
    ('C1004', 'Umbrella KK',        'sec@umbrella.example',     'enterprise', 'JP', '2018-01-09', 'sk_live_umbrella_b2a7c9d61e'),
    ('C1005', 'Stark Industries',   'tony@stark.example',       'team',       'US', '2020-05-29', 'sk_live_stark_6e1d4a8f3c');
