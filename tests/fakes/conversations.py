"""The conversations the scripted model server plays in more than one test (fakes/scripted_openai.py's scripts).

- A refund: the customer asks (ASK), the agent asks for the order number, the customer gives it (GIVE), the agent
  looks the order up, refunds it and says so.
- The weather: a triage agent hands the question over to a weather agent, which looks Paris up and converts to
  Fahrenheit (PARIS); the follow-up (CELSIUS) is handed over again and answered from the conversation.
"""

from __future__ import annotations

from fakes.scripted_openai import Turn

ASK = "I want a refund for my headphones."
GIVE = "It is order A-1234."
ASKS_FIRST = {
    ASK: [Turn(content="Sure, what is your order number?")],
    GIVE: [
        Turn(tool_calls=[("lookup_order", {"order_id": "A-1234"})]),
        Turn(tool_calls=[("issue_refund", {"order_id": "A-1234"})]),
        Turn(content="Order A-1234 is refunded: $59."),
    ],
}

PARIS = "What's the weather in Paris?"
CELSIUS = "And in Celsius?"
WEATHER = {
    PARIS: [
        Turn(tool_calls=[("transfer_to_weather", {})]),
        Turn(tool_calls=[("get_weather", {"city": "Paris"})]),
        Turn(tool_calls=[("to_fahrenheit", {"celsius": 21})]),
        Turn(content="It is 69.8 °F in Paris."),
    ],
    CELSIUS: [Turn(tool_calls=[("transfer_to_weather", {})]), Turn(content="It is 21 °C in Paris.")],
}
