"""Development tools: clients of the product's interfaces, not part of its core. The runtime simulators
(`simulate_calls`, `simulate_meeting`) drive the agent runtime's internal API as the runtime would, and `seed_demo`
builds the demo organization through the services. Nothing in the domain apps imports from here."""
