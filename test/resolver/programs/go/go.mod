module clusterdns.test/resolver/lookup

go 1.19
