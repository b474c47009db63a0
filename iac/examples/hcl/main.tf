# The same as examples/basic, in plain HCL. Endpoint and token: GATEWAY_ENDPOINT / GATEWAY_TOKEN.
terraform {
  required_version = ">= 1.11"
  required_providers {
    gateway = { source = "gateway.local/gateway/gateway" }
  }
}

provider "gateway" {}

variable "upstream_api_key" {
  type      = string
  sensitive = true
  ephemeral = true
}

resource "gateway_customer" "acme" {
  customer_id = "acme"
  name        = "Acme Inc."
}

resource "gateway_model" "gpt" {
  model                    = "gpt-4o-mini"
  provider_name            = "openai"
  capabilities             = ["chat", "tools"]
  input_price_per_million  = 0.15
  output_price_per_million = 0.6
}

resource "gateway_project" "web" {
  customer_id = gateway_customer.acme.customer_id
  project_id  = "web"
  description = "the web shop"
}

resource "gateway_project_model" "gpt" {
  customer_id = gateway_project.web.customer_id
  project_id  = gateway_project.web.project_id
  model_id    = gateway_model.gpt.id
}

resource "gateway_provider_connection" "primary" {
  customer_id        = gateway_project.web.customer_id
  project_id         = gateway_project.web.project_id
  name               = "primary"
  provider_name      = "openai"
  api_key_wo         = var.upstream_api_key # write-only: never stored in state
  api_key_wo_version = 1                    # bump to send a new key
}

resource "gateway_provider_connection" "backup" {
  customer_id        = gateway_project.web.customer_id
  project_id         = gateway_project.web.project_id
  name               = "backup"
  provider_name      = "openai"
  api_key_wo         = var.upstream_api_key
  api_key_wo_version = 1
}

resource "gateway_route" "gpt" {
  customer_id = gateway_project.web.customer_id
  project_id  = gateway_project.web.project_id
  model       = gateway_model.gpt.model
  target {
    connection = gateway_provider_connection.primary.name
    model      = "gpt-4o-mini"
  }
  target {
    connection = gateway_provider_connection.backup.name
    model      = "gpt-4o-mini"
    priority   = 1 # backup
  }
  depends_on = [gateway_project_model.gpt]
}

resource "gateway_api_key" "app" {
  customer_id = gateway_project.web.customer_id
  project_id  = gateway_project.web.project_id
  name        = "app"
  scopes      = ["inference"]
}

output "api_key" {
  value     = gateway_api_key.app.key
  sensitive = true
}
