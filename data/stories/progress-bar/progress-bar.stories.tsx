import { type FT, joinStyles } from 'plaited'
import { story } from 'plaited/testing'
import { styles } from './progress-bar.css.ts'

export const meta = {
  title: 'Progress bar',
  description: 'Determinate progress indicators with role="progressbar" and value attributes',
}

const ProgressBar: FT<{
  id: string
  label: string
  value: number
  min?: number
  max?: number
  valueText?: string
  error?: string
}> = ({ id, label, value, min = 0, max = 100, valueText, error }) => {
  const percent = Math.round(((value - min) / (max - min)) * 100)
  const step = Math.min(100, Math.max(0, Math.round(percent / 25) * 25))
  const complete = percent >= 100
  return (
    <div {...styles.field}>
      <div {...styles.header}>
        <span id={`${id}-label`} {...styles.label}>
          {label}
        </span>
        <span aria-hidden='true'>{valueText ?? `${percent}%`}</span>
      </div>
      <div
        role='progressbar'
        aria-labelledby={`${id}-label`}
        aria-valuenow={value}
        aria-valuemin={min}
        aria-valuemax={max}
        aria-valuetext={valueText}
        aria-describedby={error ? `${id}-error` : undefined}
        {...styles.track}
      >
        <div {...joinStyles(styles.fill, styles[`fill${step}`], complete && styles.complete, error && styles.failed)}></div>
      </div>
      {error && (
        <p id={`${id}-error`} role='alert' {...styles.error}>
          {error}
        </p>
      )}
    </div>
  )
}

export const fileUploadProgress = story({
  intent: 'Create a progress bar for uploading "holiday-photos.zip" that is 50% complete',
  template: ProgressBar,
  args: { id: 'upload', label: 'Uploading holiday-photos.zip', value: 50 },
  play: async ({ assert, findByAttribute }) => {
    const bar = await findByAttribute('role', 'progressbar')
    assert({ given: 'half the upload done', should: 'expose aria-valuenow', actual: bar?.getAttribute('aria-valuenow'), expected: '50' })
  },
})

export const completedInstall = story({
  intent: 'Create a completed green progress bar for an app installation at 100 percent',
  template: ProgressBar,
  args: { id: 'install', label: 'Installing updates', value: 100 },
})

export const onboardingSteps = story({
  description: 'Create an "Account setup" onboarding progress bar on step 3 of 4 with aria-valuetext "Step 3 of 4"',
  template: ProgressBar,
  args: { id: 'onboarding', label: 'Account setup', value: 3, min: 0, max: 4, valueText: 'Step 3 of 4' },
})

export const failedBackup = story({
  intent: 'Create a progress bar for a cloud backup that stopped at 25% with the error "Backup failed: connection lost"',
  template: ProgressBar,
  args: { id: 'backup', label: 'Cloud backup', value: 25, error: 'Backup failed: connection lost' },
})

export const nativeExportProgress = story({
  intent: 'Create a native progress element labelled "Exporting report" at 75 of 100',
  template: () => (
    <div {...styles.field}>
      <label htmlFor='export-progress' {...styles.label}>
        Exporting report
      </label>
      <progress id='export-progress' value={75} max={100} {...styles.native}>
        75%
      </progress>
      <p {...styles.hint}>About 20 seconds remaining</p>
    </div>
  ),
})

export const queuedDownloadNotStarted = story({
  intent: 'Indicate that "Downloading offline maps" is queued and has not begun, sitting at zero',
  template: ProgressBar,
  args: { id: 'maps', label: 'Downloading offline maps', value: 0 },
  play: async ({ assert, findByAttribute }) => {
    const bar = await findByAttribute('role', 'progressbar')
    assert({ given: 'a queued download', should: 'report zero', actual: bar?.getAttribute('aria-valuenow'), expected: '0' })
  },
})

export const storageQuotaUsed = story({
  intent: 'Visualise "Storage used": 12 GB out of a 15 GB quota, announced as "12 GB of 15 GB used"',
  template: ProgressBar,
  args: { id: 'storage', label: 'Storage used', value: 12, min: 0, max: 15, valueText: '12 GB of 15 GB used' },
  play: async ({ assert, findByAttribute }) => {
    const bar = await findByAttribute('role', 'progressbar')
    assert({ given: 'a quota of 15', should: 'expose the maximum', actual: bar?.getAttribute('aria-valuemax'), expected: '15' })
    assert({ given: 'usage in GB', should: 'announce a readable value', actual: bar?.getAttribute('aria-valuetext'), expected: '12 GB of 15 GB used' })
  },
})

export const batteryChargeLevel = story({
  intent: 'A meter-like bar labelled "Battery level" showing the headphones charged to 80 percent',
  template: ProgressBar,
  args: { id: 'battery', label: 'Battery level', value: 80 },
  play: async ({ assert, findByAttribute }) => {
    const bar = await findByAttribute('aria-labelledby', 'battery-label')
    assert({ given: 'a charge of 80', should: 'report it', actual: bar?.getAttribute('aria-valuenow'), expected: '80' })
  },
})

export const ovenPreheatRange = story({
  intent: 'Build a "Preheating oven" bar whose scale runs from 20 up to 220 degrees, currently at 170 and spoken as "170 of 220 degrees"',
  template: ProgressBar,
  args: { id: 'oven', label: 'Preheating oven', value: 170, min: 20, max: 220, valueText: '170 of 220 degrees' },
  play: async ({ assert, findByAttribute }) => {
    const bar = await findByAttribute('role', 'progressbar')
    assert({ given: 'a scale starting at 20', should: 'expose the minimum', actual: bar?.getAttribute('aria-valuemin'), expected: '20' })
    assert({ given: 'a temperature of 170', should: 'expose the current value', actual: bar?.getAttribute('aria-valuenow'), expected: '170' })
  },
})

export const indeterminateTranscode = story({
  intent: 'Show a native progress element labelled "Transcoding podcast episode" with no value because its length is unknown, plus the note "This may take a few minutes"',
  template: () => (
    <div {...styles.field}>
      <label htmlFor='transcode-progress' {...styles.label}>
        Transcoding podcast episode
      </label>
      <progress id='transcode-progress' {...styles.native}></progress>
      <p {...styles.hint}>This may take a few minutes</p>
    </div>
  ),
  play: async ({ assert, findByAttribute }) => {
    const progress = await findByAttribute('id', 'transcode-progress')
    assert({ given: 'an unknown duration', should: 'leave the value unset', actual: progress?.hasAttribute('value'), expected: false })
  },
})

export const courseLessonsFinished = story({
  intent: 'A "Course completion" bar for a student who has finished all 12 of 12 lessons, read aloud as "12 lessons completed"',
  template: ProgressBar,
  args: { id: 'course', label: 'Course completion', value: 12, min: 0, max: 12, valueText: '12 lessons completed' },
  play: async ({ assert, findByAttribute }) => {
    const bar = await findByAttribute('role', 'progressbar')
    assert({ given: 'every lesson done', should: 'reach the maximum', actual: bar?.getAttribute('aria-valuenow'), expected: '12' })
  },
})

export const manifestSyncHalted = story({
  intent: 'Create a "Syncing delivery manifests" bar that halted after 60 of 200 manifests, showing the error "Sync paused: handheld scanner offline"',
  template: ProgressBar,
  args: { id: 'manifests', label: 'Syncing delivery manifests', value: 60, min: 0, max: 200, error: 'Sync paused: handheld scanner offline' },
  play: async ({ assert, findByAttribute }) => {
    const alert = await findByAttribute('role', 'alert')
    assert({ given: 'a halted sync', should: 'announce the error', actual: alert?.textContent, expected: 'Sync paused: handheld scanner offline' })
  },
})

export const loanReviewJustStarted = story({
  intent: 'Show the "Loan paperwork review" barely under way at 10 percent, with screen readers hearing "Review just started"',
  template: ProgressBar,
  args: { id: 'loan-review', label: 'Loan paperwork review', value: 10, valueText: 'Review just started' },
})
