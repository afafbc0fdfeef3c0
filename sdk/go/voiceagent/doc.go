// Voice agents as code: agents, published versions, widgets, knowledge bases and analysis groups.
package voiceagent
