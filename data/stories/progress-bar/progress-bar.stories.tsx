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
  description: 'Create an onboarding progress bar on step 3 of 4 with aria-valuetext "Step 3 of 4"',
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
