package acme.dns

addresses := net.lookup_ip_addr("example.com")
