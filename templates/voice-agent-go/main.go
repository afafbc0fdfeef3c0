// A voice agent as code. `pulumi up` creates the agent (its working draft), publishes the draft as
// a version and puts it live. Change the configuration or prompt.md and `pulumi up` again: the next
// version goes live; a revert puts the earlier version back live without publishing anything.
package main

import (
	"os"

	"github.com/pulumi-voice-agent/pulumi-voice-agent/sdk/go/voiceagent"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

func main() {
	pulumi.Run(func(ctx *pulumi.Context) error {
		prompt, err := os.ReadFile("prompt.md")
		if err != nil {
			return err
		}
		agent, err := voiceagent.NewAgent(ctx, "agent", &voiceagent.AgentArgs{
			Name:         pulumi.String("Order support"),
			SystemPrompt: pulumi.String(string(prompt)),
			Greeting: &voiceagent.AgentGreetingArgs{
				Message: pulumi.String("Hello! How can I help you with your order today?"),
			},
			Language: &voiceagent.LanguageArgs{
				Default:    pulumi.String("en-IN"),
				Additional: pulumi.StringArray{pulumi.String("hi-IN")},
			},
			Voice: &voiceagent.VoiceArgs{
				Provider: pulumi.String("sarvam"),
				VoiceId:  pulumi.String("meera"),
			},
			BuiltinTools: &voiceagent.BuiltinToolsArgs{
				EndCall: &voiceagent.BuiltinToolsEndCallArgs{Enabled: pulumi.Bool(true)},
			},
			Variables: voiceagent.VariableArray{
				&voiceagent.VariableArgs{Key: pulumi.String("order_id"), DefaultValue: pulumi.String("unknown")},
			},
		})
		if err != nil {
			return err
		}
		// Publishes the agent's draft as a version and puts it live (label: a release tag, editable later).
		live, err := voiceagent.NewAgentVersion(ctx, "agent-live", &voiceagent.AgentVersionArgs{
			Agent: agent,
			Label: pulumi.String("1"),
		})
		if err != nil {
			return err
		}
		ctx.Export("agentId", agent.AgentId)
		ctx.Export("liveVersion", live.Version)
		ctx.Export("dashboardUrl", agent.DashboardUrl)
		return nil
	})
}
