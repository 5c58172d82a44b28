"""Run records and their store; importing the package registers every record kind."""

from magi.state import council as council
