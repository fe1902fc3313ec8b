package acme.env

secrets := opa.runtime().env
