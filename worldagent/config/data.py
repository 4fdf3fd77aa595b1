"""The data sections: ``discover`` (story parsing), ``generate`` (rows and the train/eval split),
``reward`` (the story test's reward weights) and ``storytest`` (the story runner).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from worldagent.config.base import Section


class DiscoverParams(Section):
    stories_dir: str = "data/stories"
    strict: bool = False
    max_file_bytes: int = Field(default=1_048_576, gt=0)


class RewardWeights(Section):
    passed: float = Field(default=0.5, ge=0)
    a11y: float = Field(default=0.3, ge=0)
    assertions: float = Field(default=0.2, ge=0)


class StorytestParams(Section):
    runner: Literal["python", "browser", "command"] = "python"
    chromium_path: str | None = None
    command: str | None = None
    max_component_depth: int = Field(default=64, gt=0)
    max_steps: int = Field(default=200_000, gt=0)

    @model_validator(mode="after")
    def _command_needs_command(self) -> StorytestParams:
        if self.runner == "command" and not self.command:
            raise ValueError("storytest.command is required when storytest.runner is 'command'")
        return self


# The stories of data/stories written for evaluation only (issue 11): each intent was written on its own,
# not as a rewording of a training intent (tests/world_agent/test_world_agent_generate_heldout.py checks that no training intent
# is lexically close). One id per story, so that the held-out set is reviewed like code.
DATA_STORIES_HELDOUT: tuple[str, ...] = (
    "accordion/accordion.stories.tsx#recipeMethodLastStepOpen",
    "accordion/accordion.stories.tsx#releaseNotesSingleSection",
    "accordion/accordion.stories.tsx#conferenceAgendaPastSessions",
    "alert/alert.stories.tsx#sessionExpiryWarning",
    "alert/alert.stories.tsx#uploadFinishedPolite",
    "alert/alert.stories.tsx#calendarSyncErrorDismissible",
    "avatar/avatar.stories.tsx#twoReviewersNoOverflow",
    "avatar/avatar.stories.tsx#channelMembersCappedAtTwo",
    "badge/badge.stories.tsx#inboxCappedCount",
    "badge/badge.stories.tsx#inboxNothingUnread",
    "badge/badge.stories.tsx#orderFulfilmentStages",
    "breadcrumb/breadcrumb.stories.tsx#recipeCategoryTrail",
    "breadcrumb/breadcrumb.stories.tsx#helpCenterTrailNamed",
    "breadcrumb/breadcrumb.stories.tsx#dashboardOnlyCrumb",
    "button/button.stories.tsx#createAccountSubmit",
    "button/button.stories.tsx#exportingCsvSecondaryBusy",
    "button/button.stories.tsx#archiveSecondaryUnavailable",
    "card/card.stories.tsx#meetupEventCard",
    "card/card.stories.tsx#noSavedSearchesEmptyState",
    "card/card.stories.tsx#woolBlanketListing",
    "checkbox/checkbox.stories.tsx#allPhotosSelected",
    "checkbox/checkbox.stories.tsx#nothingSelectedAttachments",
    "checkbox/checkbox.stories.tsx#essentialCookiesLocked",
    "dialog/dialog.stories.tsx#sessionTimeoutDialog",
    "dialog/dialog.stories.tsx#inviteTeammateDialog",
    "dialog/dialog.stories.tsx#discardDraftDialog",
    "progress-bar/progress-bar.stories.tsx#queuedDownloadNotStarted",
    "progress-bar/progress-bar.stories.tsx#storageQuotaUsed",
    "progress-bar/progress-bar.stories.tsx#batteryChargeLevel",
    "radio-group/radio-group.stories.tsx#pizzaCrustDefault",
    "radio-group/radio-group.stories.tsx#experienceRatingRow",
    "radio-group/radio-group.stories.tsx#requiredSeatClass",
    "select/select.stories.tsx#cardExpiryMonth",
    "select/select.stories.tsx#sortOrderNewestFirst",
    "select/select.stories.tsx#departureAirportByCountry",
    "switch/switch.stories.tsx#twoFactorLockedOn",
    "switch/switch.stories.tsx#locationHistoryOffExplained",
    "switch/switch.stories.tsx#motionContrastBothOn",
    "tabs/tabs.stories.tsx#recipeTabsNutritionActive",
    "tabs/tabs.stories.tsx#signInRegisterTabs",
    "tabs/tabs.stories.tsx#verticalAdminSectionsLocked",
    "text-input/text-input.stories.tsx#readOnlyApiKey",
    "text-input/text-input.stories.tsx#phoneNumberWrongLength",
    "text-input/text-input.stories.tsx#catalogueSearchBox",
    "textarea/textarea.stories.tsx#emptyCommentBox",
    "textarea/textarea.stories.tsx#cancellationReasonMissing",
    "textarea/textarea.stories.tsx#readOnlyTermsText",
    "toggle-button/toggle-button.stories.tsx#shuffleOnLocked",
    "toggle-button/toggle-button.stories.tsx#paragraphAlignmentCenter",
    "toggle-button/toggle-button.stories.tsx#editorViewOptions",
)
# The 17 stories that `eval_fraction: 0.2` drew from the first 77 of data/stories (seed 1234), pinned by id:
# a drawn split moves whenever a component gains a story, and the eval set must not (issue 11 compares runs).
DATA_STORIES_DRAWN: tuple[str, ...] = (
    "accordion/accordion.stories.tsx#faqAllCollapsed",
    "alert/alert.stories.tsx#dismissibleCookieNotice",
    "avatar/avatar.stories.tsx#photoAvatar",
    "badge/badge.stories.tsx#unreadCountBadge",
    "breadcrumb/breadcrumb.stories.tsx#contactBreadcrumb",
    "button/button.stories.tsx#secondaryButton",
    "card/card.stories.tsx#productCard",
    "checkbox/checkbox.stories.tsx#newsletterChecked",
    "dialog/dialog.stories.tsx#savingDialog",
    "progress-bar/progress-bar.stories.tsx#onboardingSteps",
    "radio-group/radio-group.stories.tsx#paymentMethodError",
    "select/select.stories.tsx#preselectedLanguage",
    "switch/switch.stories.tsx#autoSaveWithHint",
    "tabs/tabs.stories.tsx#tabsWithDisabledTab",
    "text-input/text-input.stories.tsx#siteSearch",
    "textarea/textarea.stories.tsx#requiredDeliveryInstructions",
    "toggle-button/toggle-button.stories.tsx#formattingToolbar",
)


class GenerateParams(Section):
    """The generate stage and its train/eval split.

    ``heldout``: stories that are always evaluation intents, never training rows, whatever
    ``eval_split`` says: fnmatch patterns (case-sensitive) over story ids ``<file>#<export>`` (the
    file relative to ``discover.stories_dir``, e.g. ``button/button.stories.tsx#iconOnlyClose``)
    or over story files (``button/*``). A held-out story sits in its component's story file next to
    the training stories, so it is scored as a later story (the component's styles and template are
    given) and needs no second template or file-name convention; it is removed before the
    ``eval_fraction``/``eval_components`` split is drawn, so adding one never changes which other
    stories train. A pattern that matches no story is an error (a typo would otherwise silently
    train on the story); another stories folder sets its own list, or ``[]``. The default names the
    whole eval set of data/stories (the stories written for evaluation and the ones a 0.2 draw once
    took), so ``eval_fraction`` defaults to 0: a new training story never moves the eval set.
    """

    eval_split: Literal["intent", "component"] = "intent"
    eval_fraction: float = Field(default=0.0, ge=0, lt=1)
    eval_components: list[str] = Field(default_factory=list)
    heldout: list[str] = Field(default_factory=lambda: [*DATA_STORIES_HELDOUT, *DATA_STORIES_DRAWN])
    multi_turn: bool = True
    single_turn: bool = True
    degradations: list[str] = Field(
        default_factory=lambda: [
            "copied-args",
            "div-soup",
            "missing-aria",
            "no-keyboard",
            "inline-style",
            "hardcoded-color",
            "missing-label",
        ]
    )
    max_pairs_per_story: int = Field(default=3, ge=0)
    examples: int = Field(default=1, ge=0)
    """Nearest training stories (BM25 over intents) shown in every prompt, train and eval alike; 0: none."""
    example_max_chars: int = Field(default=1200, gt=0)
    """Longer story sources are never shown (a prompt budget: ~300 tokens each)."""
    relabelled_variants: int = Field(default=0, ge=0)
    """Relabelled copies of each training story that writes its story alone: its quoted labels
    swapped for other training intents' labels, in the intent and the story (SFT rows only; see
    ``worldagent.world_agent.relabel``). 0: none."""

    @model_validator(mode="after")
    def _components_need_component_split(self) -> GenerateParams:
        if self.eval_components and self.eval_split != "component":
            raise ValueError("generate.eval_components is only used with generate.eval_split: component")
        return self
