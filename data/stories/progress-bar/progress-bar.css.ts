import { createStyles } from 'plaited'
import { progressBarTokens } from './progress-bar.tokens.ts'

export const styles = createStyles({
  field: {
    display: 'flex',
    flexDirection: 'column',
    gap: '0.375rem',
    maxWidth: '24rem',
  },
  header: {
    display: 'flex',
    justifyContent: 'space-between',
    color: progressBarTokens.label,
    fontSize: '0.875rem',
  },
  label: {
    fontWeight: '600',
  },
  track: {
    height: '0.5rem',
    borderRadius: '999px',
    overflow: 'hidden',
    backgroundColor: progressBarTokens.track,
  },
  fill: {
    height: '100%',
    borderRadius: '999px',
    backgroundColor: progressBarTokens.fill,
  },
  complete: {
    backgroundColor: progressBarTokens.complete,
  },
  failed: {
    backgroundColor: progressBarTokens.error,
  },
  fill0: { width: '0%' },
  fill25: { width: '25%' },
  fill50: { width: '50%' },
  fill75: { width: '75%' },
  fill100: { width: '100%' },
  hint: {
    margin: '0',
    fontSize: '0.875rem',
    color: progressBarTokens.hint,
  },
  error: {
    margin: '0',
    fontSize: '0.875rem',
    color: progressBarTokens.error,
  },
  native: {
    width: '100%',
    accentColor: progressBarTokens.fill,
  },
})
