"""The support_desk crew as CrewAI would build it: a manager routes the tickets."""

from crewai import Crew, Process
from crewai.project import CrewBase, crew


@CrewBase
class SupportDesk:
    """Triage, diagnose, check the warranty, reply."""

    @crew
    def crew(self) -> Crew:
        return Crew(agents=self.agents, tasks=self.tasks, process=Process.hierarchical,
                    manager_llm="openai/gpt-4o")
